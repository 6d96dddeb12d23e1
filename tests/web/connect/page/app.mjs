// The page's script (bundled by esbuild into bundle.js): connect-web calling pbj's echo service.
//
// No generated code: the schema is the FileDescriptorSet served beside the page (echo.binpb),
// read into a registry at run time. The page calls a unary method (Connect's JSON form, what
// a browser sends by default) and a server-streaming one (the binary form), writes what came
// back into the page, and sets #status to "done" (or to the error) for the test to read.
import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";

const show = (id, text) => { document.getElementById(id).textContent = text; };

async function main() {
  const bytes = new Uint8Array(await (await fetch("echo.binpb")).arrayBuffer());
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  const service = registry.getService("pbjtest.echo.v1.Echo");
  const Request = registry.getMessage("pbjtest.echo.v1.EchoRequest");
  const baseUrl = window.location.origin;
  const json = createClient(service, createConnectTransport({ baseUrl }));
  const binary = createClient(service, createConnectTransport({ baseUrl, useBinaryFormat: true }));

  const reply = await json.unary(create(Request, { text: "from the browser" }), { timeoutMs: 10000 });
  show("unary", reply.text);
  const list = document.getElementById("stream");
  for await (const r of binary.serverStream(create(Request, { text: "tick", count: 3 }), { timeoutMs: 10000 })) {
    const item = document.createElement("li");
    item.textContent = `${r.text} ${r.index}`;
    list.appendChild(item);
  }
  try {
    await json.unary(create(Request, { fail: "abort" }), { timeoutMs: 10000 });
    show("error", "none");
  } catch (err) {
    const e = ConnectError.from(err);
    show("error", `${Code[e.code]}: ${e.rawMessage}`);
  }
  show("status", "done");
}

main().catch((err) => show("status", `failed: ${err}`));
