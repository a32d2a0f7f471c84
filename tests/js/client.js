// A real bitsharesjs-ws / bitsharesjs client, run by the nodeapi test suite.
//   node client.js <ws-url> <account-name> [--subscribe]
// Runs bitsharesjs-ws' own connect sequence (login "", "", then the database,
// network_broadcast and history accessors, then get_chain_id), reads an
// account with get_full_accounts and its history with get_account_history,
// and with --subscribe uses bitsharesjs' ChainStore (which subscribes only if
// the head time is within 60 s of the wall clock) and waits for a
// block-applied notice.  Prints one JSON object on stdout; exits non-zero on
// any failure.
"use strict";
const { Apis } = require("bitsharesjs-ws");
const { ChainStore } = require("bitsharesjs");

const [url, accountName, flag] = process.argv.slice(2);

function fail(err) {
  process.stderr.write(String((err && (err.stack || err.message)) || JSON.stringify(err)) + "\n");
  process.exit(1);
}

async function main() {
  const out = {};
  const apis = Apis.instance(url, true);
  await apis.init_promise;
  out.chain_id = await Apis.instance().db_api().exec("get_chain_id", []);
  const props = await Apis.instance().db_api().exec("get_dynamic_global_properties", []);
  out.head_block_number = props.head_block_number;
  const full = await Apis.instance().db_api().exec("get_full_accounts", [[accountName], false]);
  out.account = full[0][1].account;
  out.balances = full[0][1].balances;
  out.history = await Apis.instance().history_api().exec(
    "get_account_history", [out.account.id, "1.11.0", 10, "1.11.0"]);
  if (flag === "--subscribe") {
    await ChainStore.init(false);
    out.notice = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no block-applied notice in 20 s")), 20000);
      Apis.instance().db_api().exec("set_block_applied_callback", [(blockId) => {
        clearTimeout(timer);
        resolve(blockId);
      }]).catch(reject);
    });
    ChainStore.unsubscribe && ChainStore.clearCache && ChainStore.clearCache();
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  await Apis.close();
  process.exit(0);
}

main().catch(fail);
