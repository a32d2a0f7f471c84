// One bitsharesjs transfer on a running devnet, run by the nodeapi test suite:
//   node devnet_transfer.js WS_URL CHAIN_ID AMOUNT [controls]
// Registers the devnet's chain with bitsharesjs-ws (the line the devnet's
// banner prints: without it bitsharesjs falls back to the CBA key prefix),
// connects, transfers AMOUNT satoshis of TEST from dev0 to dev1 with
// TransactionBuilder (expiration from the head block time, bitsharesjs'
// rule) and waits for the broadcast callback (the transaction in a block),
// 20 s at most.  With "controls" it then drives the devnet as the README
// shows: automine off, the pending transactions, the next block's time an
// hour on, one block, automine on, impersonate dev1 and stop; then
// set_balance of dev1 must reach ChainStore (a notice outside a block),
// 10 s at most.  Prints one
// JSON object on stdout; exits non-zero on any failure, a timeout included.
"use strict";
const { Apis, ChainConfig } = require("bitsharesjs-ws");
const { ChainStore, FetchChain, PrivateKey, TransactionBuilder } = require("bitsharesjs");

function fail(err) {
  process.stderr.write(String((err && (err.stack || err.message)) || JSON.stringify(err)) + "\n");
  process.exit(1);
}

async function main() {
  const [url, chainId, amount, controls] = process.argv.slice(2);
  ChainConfig.networks.NODEAPI_DEVNET = { core_asset: "TEST", address_prefix: "TEST",
                                          chain_id: chainId };
  await Apis.instance(url, true).init_promise;
  const prefix = ChainConfig.address_prefix;  // from the registered chain id
  await ChainStore.init(false);
  const devnetApi = (method, params) => Apis.instance().ws_rpc.call(["devnet", method, params]);
  const [dev0, dev1] = await devnetApi("get_accounts", []);
  const tr = new TransactionBuilder();
  tr.add_type_operation("transfer", {
    fee: { amount: 0, asset_id: "1.3.0" }, from: dev0.id, to: dev1.id,
    amount: { amount: Number(amount), asset_id: "1.3.0" },
  });
  await tr.set_required_fees();
  const key = PrivateKey.fromWif(dev0.wif);
  tr.add_signer(key, key.toPublicKey().toPublicKeyString(prefix));
  const started = Date.now();
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error("no confirmation in 20 s")), 20000));
  const confirmed = await Promise.race([tr.broadcast(), timeout]);
  const out = { prefix, block_num: confirmed[0].block_num, ms: Date.now() - started,
                expiration: tr.expiration };
  if (controls === "controls") {
    await devnetApi("set_automine", [false]);
    const pending = await devnetApi("pending_transactions", []);
    const head = await devnetApi("get_head", []);
    const next = new Date(Date.parse(head.time + "Z") + 3600 * 1000).toISOString().slice(0, 19);
    await devnetApi("set_next_block_time", [next]);
    await devnetApi("produce_blocks", [1]);
    const after = await devnetApi("get_head", []);
    await devnetApi("set_automine", [true]);
    const impersonated = await devnetApi("impersonate_account", ["dev1"]);
    const left = await devnetApi("stop_impersonating_account", ["dev1"]);
    out.controls = { pending, next, head_time: after.time, automine: after.automine,
                     impersonated, left };
    const account = await FetchChain("getAccount", "dev1");  // subscribes the full account
    const balanceId = account.getIn(["balances", "1.3.0"]);
    await devnetApi("set_balance", ["dev1", 4242]);
    const until = Date.now() + 10000;
    out.controls.chainstore_balance = null;
    while (Date.now() < until) {
      const obj = ChainStore.getObject(balanceId);
      if (obj && Number(obj.get("balance")) === 4242) {
        out.controls.chainstore_balance = 4242;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  await Apis.close();
  process.exit(0);
}

main().catch(fail);
