// connect-es on Node.js calling pbj's echo service: every call kind, an error with details, a deadline.
//
// No generated code: the service and its messages come from the FileDescriptorSet the test
// wrote (pbj's files of tests/protos/grpc), read into a registry at run time.
//
//   node node_client.mjs BASE_URL DESCRIPTOR_SET PROTOCOL     (PROTOCOL: connect | grpc | grpc-web)
//
// Prints one JSON object with what each call answered; the Python test checks it.
import { readFileSync } from "node:fs";

import { create, createFileRegistry, fromBinary, toJson } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";

const [baseUrl, setPath, protocol] = process.argv.slice(2);
const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(setPath)));
const service = registry.getService("pbjtest.echo.v1.Echo");
const Request = registry.getMessage("pbjtest.echo.v1.EchoRequest");
const Reply = registry.getMessage("pbjtest.echo.v1.EchoReply");
const Detail = registry.getMessage("pbjtest.common.v1.Detail");

const makers = { connect: createConnectTransport, grpc: createGrpcTransport, "grpc-web": createGrpcWebTransport };
const transport = makers[protocol]({ baseUrl, httpVersion: "2" });
const client = createClient(service, transport);
const request = (init) => create(Request, init);
const json = (message) => toJson(Reply, message);

async function* requests(...texts) {
  for (const text of texts) {
    yield request({ text });
  }
}

const out = {};
const trailers = {};
out.unary = json(await client.unary(request({ text: "node", blob: new Uint8Array([1, 2]) }), {
  headers: { "x-trace": "es" },
  timeoutMs: 10000,
  onTrailer: (t) => { trailers.unary = t.get("x-trailer"); },
}));
out.serverStream = [];
for await (const reply of client.serverStream(request({ text: "s", count: 3 }), { timeoutMs: 10000 })) {
  out.serverStream.push(json(reply));
}
out.clientStream = json(await client.clientStream(requests("a", "b", "c"), { timeoutMs: 10000 }));
out.bidi = [];
for await (const reply of client.bidi(requests("x", "y"), { timeoutMs: 10000 })) {
  out.bidi.push(json(reply));
}
try {
  await client.unary(request({ fail: "details" }), { timeoutMs: 10000 });
  out.error = "no error";
} catch (err) {
  const e = ConnectError.from(err);
  out.error = { code: Code[e.code], message: e.rawMessage, details: e.findDetails(Detail).map((d) => toJson(Detail, d)) };
}
try {
  await client.unary(request({ delay: 5 }), { timeoutMs: 300 });
  out.deadline = "no error";
} catch (err) {
  out.deadline = Code[ConnectError.from(err).code];
}
out.trailers = trailers;
console.log(JSON.stringify(out));
