// bitsharesjs' own serializer, run by tests/protocol/test_protocol_operations.py.
//   node serialize.js <address-prefix>   (cases on stdin)
// stdin: a JSON array of [type, {...}] operations.  stdout: a JSON array
// with, per case, {"hex": "<ops.operation bytes>"} or {"error": "<message>"}
// (bitsharesjs 6.0.3 lacks some operations and refuses some forms).
"use strict";
const { ops, Serializer } = require("bitsharesjs");
const { ChainConfig } = require("bitsharesjs-ws");

ChainConfig.setPrefix(process.argv[2] || "BTS");
// bitsharesjs 6.0.3 declares empty structs (the fee parameters of virtual
// operations and balance_claim, refund/burn worker initializers) without a
// field list and then crashes on them: give them the empty list (they are
// no bytes, as in fc)
for (const s of Object.values(ops)) {
  if (s instanceof Serializer && s.types === undefined) {
    s.types = {};
    s.keys = [];
  }
}
// a one-field struct around the operation static_variant: its bytes are the
// operation's (a struct adds nothing between fields)
const wrapper = new Serializer("operation_wrapper", { op: ops.operation });
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((op) => {
    try {
      const obj = wrapper.fromObject({ op });
      return { hex: wrapper.toBuffer(obj).toString("hex") };
    } catch (err) {
      return { error: String((err && err.message) || err) };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
