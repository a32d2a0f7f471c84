// A devnet from a Node.js test script, run by the nodeapi test suite:
//   node devnet.js
// Starts `twistd -n nodeapi --devnet` (twistd from PATH) on a free port,
// reads the printed URL, connects bitsharesjs-ws, calls the devnet API set by
// name (get_accounts, snapshot, revert), transfers 12.5 TEST from dev0 to dev1
// with bitsharesjs' TransactionBuilder (broadcast with callback: automined
// at once), reverts, and stops the devnet.  Prints one JSON object on stdout;
// exits non-zero on any failure.
"use strict";
const { spawn } = require("child_process");
const { Apis, ChainConfig } = require("bitsharesjs-ws");
const { ChainStore, PrivateKey, TransactionBuilder } = require("bitsharesjs");

function fail(err) {
  process.stderr.write(String((err && (err.stack || err.message)) || JSON.stringify(err)) + "\n");
  process.exit(1);
}

function startDevnet() {
  const devnet = spawn("twistd", ["-n", "--pidfile=", "nodeapi", "--devnet",
                                  "--rpc-endpoint", "tcp:0:interface=127.0.0.1"]);
  return new Promise((resolve, reject) => {
    let log = "";
    const timer = setTimeout(() => reject(new Error("devnet not ready in 60 s:\n" + log)), 60000);
    devnet.stdout.on("data", (chunk) => {
      log += chunk;
      const m = log.match(/Devnet ready on (ws:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve({ devnet, url: m[1] }); }
    });
    devnet.on("exit", (code) => reject(new Error(`devnet exited ${code}:\n${log}`)));
  });
}

async function balance(id) {
  const [b] = await Apis.instance().db_api().exec("get_account_balances", [id, ["1.3.0"]]);
  return Number(b.amount);
}

async function main() {
  const { devnet, url } = await startDevnet();
  try {
    await Apis.instance(url, true).init_promise;
    ChainConfig.setPrefix("TEST");
    await ChainStore.init(false);
    const devnetApi = (method, params) => Apis.instance().ws_rpc.call(["devnet", method, params]);
    const [dev0, dev1] = await devnetApi("get_accounts", []);
    const before = await balance(dev1.id);
    const snapshot = await devnetApi("snapshot", []);
    const tr = new TransactionBuilder();
    tr.add_type_operation("transfer", {
      fee: { amount: 0, asset_id: "1.3.0" }, from: dev0.id, to: dev1.id,
      amount: { amount: 1250000, asset_id: "1.3.0" },
    });
    await tr.set_required_fees();
    const key = PrivateKey.fromWif(dev0.wif);
    tr.add_signer(key, key.toPublicKey().toPublicKeyString("TEST"));
    const started = Date.now();
    const confirmed = await tr.broadcast();
    const out = { url, confirmed_block: confirmed[0].block_num, ms: Date.now() - started,
                  before, after: await balance(dev1.id) };
    out.reverted = await devnetApi("revert", [snapshot]);
    out.after_revert = await balance(dev1.id);
    process.stdout.write(JSON.stringify(out) + "\n");
    await Apis.close();
  } finally {
    devnet.kill("SIGTERM");
  }
  process.exit(0);
}

main().catch(fail);
