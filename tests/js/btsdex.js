// btsdex (npm), a trading-bot library, through its everyday flows against
// the node: node btsdex.js <ws url> <chain id> <WIF of init0 and init1>
//
// connect (login, API ids, chain id), accounts and assets by name, the
// transaction builder (asset_create), assetIssue, transfer with a memo,
// sell / buy (a match), orders, getOrderBook, getLimitOrders, ticker,
// cancelOrder, balances, account history and the 'block' event.  Prints
// one JSON line of what it saw; the Python test checks the amounts.
"use strict";

const BitShares = require("btsdex");
const api = require("btsdex-api");

const [url, chainId, wif] = process.argv.slice(2);

function timeout(ms, what) {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: timed out`)), ms));
}

async function main() {
  // a devnet: btsdex knows mainnet and the public testnet by chain id only
  api.addConfig({ name: "nodeapi devnet", coreAsset: "TEST", addressPrefix: "TEST", chainId });
  await BitShares.connect(url, false);
  const out = { chain: BitShares.chain };

  const init0 = new BitShares("init0", wif);
  const init1 = new BitShares("init1", wif);
  await init0.initPromise;
  await init1.initPromise;
  out.init0 = init0.account.id;
  out.init1 = init1.account.id;

  // the transaction builder: init0 creates GOLD (precision 3)
  const tx = init0.newTx();
  tx.asset_create({
    fee: { amount: 0, asset_id: "1.3.0" },
    issuer: init0.account.id,
    symbol: "GOLD",
    precision: 3,
    common_options: {
      max_supply: "1000000000", market_fee_percent: 0, max_market_fee: 0,
      issuer_permissions: 79, flags: 0,
      core_exchange_rate: { base: { amount: 1, asset_id: "1.3.0" },
                            quote: { amount: 1, asset_id: "1.3.1" } },
      whitelist_authorities: [], blacklist_authorities: [],
      whitelist_markets: [], blacklist_markets: [], description: "", extensions: [],
    },
    is_prediction_market: false,
    extensions: [],
  });
  out.asset_create_cost = await tx.cost();
  await tx.broadcast();
  const gold = await BitShares.assets.gold;
  out.gold = { id: gold.id, symbol: gold.symbol, precision: gold.precision };

  await init0.assetIssue("init0", "GOLD", 100);
  init0.setMemoKey(wif);
  await init0.transfer("init1", "TEST", 2.5, "for the bot");
  const history = await BitShares.history.get_account_history(init1.account.id, "1.11.0", 10, "1.11.0");
  const memoOp = history.find(h => h.op[0] === 0 && h.op[1].memo);
  out.transfer = memoOp.op[1];
  init1.setMemoKey(wif);
  out.memo = init1.memoDecode(memoOp.op[1].memo);

  // init0 sells 10 GOLD at 2 TEST; init1 buys 4 GOLD at 2 TEST: a match at
  // the maker's price, 4 GOLD for 8 TEST
  const ask = await init0.sell("GOLD", "TEST", 10, 2);
  out.ask = ask;
  out.bid = await init1.buy("GOLD", "TEST", 4, 2);  // filled: null
  out.orders = await init0.orders();
  out.book = await BitShares.getOrderBook("GOLD", "TEST", 10);
  out.limit_orders = await BitShares.getLimitOrders("GOLD", "TEST", 10);
  out.ticker = await BitShares.ticker("TEST", "GOLD");
  out.balances_before_cancel = (await init0.balances("TEST", "GOLD")).map(
    b => ({ symbol: b.asset.symbol, amount: b.amount }));
  await init0.cancelOrder(ask.id);
  out.orders_after_cancel = await init0.orders();
  out.balances = (await init1.balances("TEST", "GOLD")).map(
    b => ({ symbol: b.asset.symbol, amount: b.amount }));

  // the 'block' event: the dynamic global properties of a new block
  out.block = await Promise.race([
    new Promise(resolve => BitShares.subscribe("block", objs => resolve(objs[0]))),
    timeout(20000, "block event"),
  ]);
  console.log(JSON.stringify(out));
  BitShares.disconnect();
  process.exit(0);
}

main().catch(err => {
  console.error(err && err.stack ? err.stack : JSON.stringify(err));
  process.exit(1);
});
