// bitsharesjs-ws logging in, for the nodeapi e2e suite.
//   node e2e.js <ws-url>
// Connects with bitsharesjs-ws' Apis.instance (which itself sends
// login("", ""), so credentials in the address, sent as HTTP Basic on the
// handshake, are replaced by the "*" entry's sets: node-rpc-access login
// rows), then walks the login API set over the same connection:
//   anonymous:    the network_node accessor            -> error
//   bytemaster:   login -> true, network_node -> id, get_info on it
//   user2:        login -> true, network_node accessor -> error,
//                 the id handed out before stays callable
//   wrong pw:     login -> false
// Prints one JSON object on stdout; exits non-zero if the connection fails.
"use strict";
const { Apis } = require("bitsharesjs-ws");

const [url] = process.argv.slice(2);

function message(err) {
  return (err && (err.message || JSON.stringify(err))) || String(err);
}

async function attempt(promise) {
  try {
    return { result: await promise };
  } catch (err) {
    return { error: message(err) };
  }
}

async function main() {
  const apis = Apis.instance(url, true);
  await apis.init_promise;
  const rpc = Apis.instance().ws_rpc;
  const out = {};
  out.anonymous_network_node = await attempt(rpc.call([1, "network_node", []]));
  out.bytemaster_login = await rpc.call([1, "login", ["bytemaster", "supersecret"]]);
  out.bytemaster_network_node = await attempt(rpc.call([1, "network_node", []]));
  const id = out.bytemaster_network_node.result;
  out.bytemaster_info = await attempt(rpc.call([id, "get_info", []]));
  out.user2_login = await rpc.call([1, "login", ["user2", "superpassword2"]]);
  out.user2_network_node = await attempt(rpc.call([1, "network_node", []]));
  out.user2_old_id_info = await attempt(rpc.call([id, "get_info", []]));
  out.user2_history = await attempt(Apis.instance().history_api().exec(
    "get_account_history", ["1.2.19", "1.11.0", 10, "1.11.0"]));
  out.wrong_login = await rpc.call([1, "login", ["bytemaster", "wrong"]]);
  process.stdout.write(JSON.stringify(out) + "\n");
  await Apis.close();
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(String((err && (err.stack || err.message)) || JSON.stringify(err)) + "\n");
  process.exit(1);
});
