// bitshares-ui's market flow with a real bitsharesjs / bitsharesjs-ws, run by
// the nodeapi test suite:
//   node market.js <ws-url> <base-symbol> <quote-symbol>
// Resolves both assets through bitsharesjs' ChainStore (FetchChain
// "getAsset"), subscribes with database_api subscribe_to_market(callback,
// base id, quote id) as the UI's MarketsStore does, waits (30 s at most)
// for a notice carrying fill_order operations, then reads the book with
// get_limit_orders and get_order_book.  Prints one JSON object on stdout;
// exits non-zero on any failure.
"use strict";
const { Apis } = require("bitsharesjs-ws");
const { ChainStore, FetchChain } = require("bitsharesjs");

const [url, baseSymbol, quoteSymbol] = process.argv.slice(2);

function fail(err) {
  process.stderr.write(String((err && (err.stack || err.message)) || JSON.stringify(err)) + "\n");
  process.exit(1);
}

function fills(notice) {
  // bitsharesjs-ws hands the callback the notice's argument list: one
  // argument, the block's [operation, result] pairs of this market
  const found = [];
  for (const pairs of notice || []) {
    for (const [op] of pairs) {
      if (op[0] === 4) found.push(op[1]);
    }
  }
  return found;
}

async function main() {
  const out = {};
  await Apis.instance(url, true).init_promise;
  await ChainStore.init(false);
  const [base, quote] = await Promise.all([
    FetchChain("getAsset", baseSymbol), FetchChain("getAsset", quoteSymbol)]);
  out.base = { id: base.get("id"), symbol: base.get("symbol"), precision: base.get("precision") };
  out.quote = { id: quote.get("id"), symbol: quote.get("symbol"), precision: quote.get("precision") };
  const db = Apis.instance().db_api();
  let onNotice;
  out.notice = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no fill notice in 30 s")), 30000);
    onNotice = (notice) => {
      if (fills(notice).length) {
        clearTimeout(timer);
        resolve(notice);
      }
    };
    db.exec("subscribe_to_market", [onNotice, out.base.id, out.quote.id]).catch(reject);
  });
  out.fills = fills(out.notice);
  // bitsharesjs-ws matches the callback to unsubscribe it
  await db.exec("unsubscribe_from_market", [onNotice, out.base.id, out.quote.id]);
  out.limit_orders = await db.exec("get_limit_orders", [out.base.id, out.quote.id, 10]);
  out.order_book = await db.exec("get_order_book", [baseSymbol, quoteSymbol, 10]);
  process.stdout.write(JSON.stringify(out) + "\n");
  await Apis.close();
  process.exit(0);
}

main().catch(fail);
