// A bitsharesjs transfer, run by the nodeapi test suite:
//   node transfer.js <ws-url> <wif> <from-id> <to-id> <amount>
// Builds a transfer (0) of <amount> core satoshis with bitsharesjs'
// TransactionBuilder, lets the node fill in the fee (get_required_fees), signs
// it for the node's chain id and broadcasts it with
// broadcast_transaction_with_callback, waiting for the callback (the block
// holding it).  Behind a load balancer the node reached may be a follower,
// which passes the broadcast on and calls back when the block reaches it.
// Prints one JSON object on stdout; exits non-zero on any failure (a refused
// transaction prints the node's error on stderr).
"use strict";
const { Apis, ChainConfig } = require("bitsharesjs-ws");
const { ChainStore, PrivateKey, TransactionBuilder } = require("bitsharesjs");

const [url, wif, from, to, amount] = process.argv.slice(2);

function fail(err) {
  process.stderr.write(String((err && (err.stack || err.message)) || JSON.stringify(err)) + "\n");
  process.exit(1);
}

async function main() {
  await Apis.instance(url, true).init_promise;
  ChainConfig.setPrefix("TEST");
  await ChainStore.init(false);
  const key = PrivateKey.fromWif(wif);
  const tr = new TransactionBuilder();
  tr.add_type_operation("transfer", {
    fee: { amount: 0, asset_id: "1.3.0" },
    from,
    to,
    amount: { amount: Number(amount), asset_id: "1.3.0" },
  });
  await tr.set_required_fees();
  tr.add_signer(key, key.toPublicKey().toPublicKeyString("TEST"));
  const confirmed = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no broadcast callback in 30 s")), 30000);
    tr.broadcast().then((res) => { clearTimeout(timer); resolve(res); }).catch(reject);
  });
  const out = { fee: tr.operations[0][1].fee, confirmed };
  process.stdout.write(JSON.stringify(out) + "\n");
  await Apis.close();
  process.exit(0);
}

main().catch(fail);
