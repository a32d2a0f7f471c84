// bitsharesjs' ChainStore watching an account's statistics, run by the
// nodeapi test suite:
//   node statistics.js <ws-url> <account-name>
// Fetches the account through ChainStore (FetchChain "getAccount"; ChainStore
// subscribes with set_subscribe_callback and get_full_accounts), notes its
// statistics object (graphene numbers it 2.6.N), then waits (40 s at most)
// until ChainStore's copy of it changes (total_ops grows).  Prints one JSON
// object on stdout; exits non-zero on any failure.
"use strict";
const { Apis } = require("bitsharesjs-ws");
const { ChainStore, FetchChain } = require("bitsharesjs");

const [url, accountName] = process.argv.slice(2);

function fail(err) {
  process.stderr.write(String((err && (err.stack || err.message)) || JSON.stringify(err)) + "\n");
  process.exit(1);
}

async function main() {
  await Apis.instance(url, true).init_promise;
  await ChainStore.init(false);
  const account = await FetchChain("getAccount", accountName);
  const statsId = account.get("statistics");
  const stats = () => ChainStore.getObject(statsId);
  let first = stats();
  const started = Date.now();
  while (!first && Date.now() - started < 20000) {
    await new Promise((r) => setTimeout(r, 200));
    first = stats();
  }
  if (!first) throw new Error("statistics " + statsId + " never loaded");
  const before = first.get("total_ops");
  process.stderr.write("watching " + statsId + " at total_ops " + before + "\n");
  const after = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no statistics update in 40 s")), 40000);
    const check = () => {
      const now = stats();
      if (now && now.get("total_ops") !== before) {
        clearTimeout(timer);
        ChainStore.unsubscribe(check);
        resolve(now.toJS());
      }
    };
    ChainStore.subscribe(check);
  });
  process.stdout.write(JSON.stringify({ statistics_id: statsId, before, after }) + "\n");
  await Apis.close();
  process.exit(0);
}

main().catch(fail);
