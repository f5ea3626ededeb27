// An OpenAI-compatible chat-completions server around node-llama-cpp, on CPU, for the
// real-model check of ferry-llm (tests/real_model.rs). It serves one GGUF model at
// POST /v1/chat/completions, whole or streamed (server-sent events ending in [DONE], usage
// when stream_options.include_usage is set), answers 404 model_not_found for other model
// names, and handles one request at a time.
//
// Environment:
//   FERRY_LLM_NODE_DIR    folder whose node_modules holds node-llama-cpp (required)
//   FERRY_LLM_MODEL_PATH  the .gguf file (required)
//   FERRY_LLM_MODEL_NAME  the model name served (default: the file name without .gguf)
//   FERRY_LLM_THREADS     CPU threads (default 1: a busy 2-core machine runs one thread
//                         several times faster than two that spin against other work)
//   PORT                  port on 127.0.0.1 (default 0: any free port)
// Once the model is loaded it prints `listening http://127.0.0.1:PORT/v1`.

import http from "node:http";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const nodeDir = required("FERRY_LLM_NODE_DIR");
const modelPath = required("FERRY_LLM_MODEL_PATH");
const modelName = process.env.FERRY_LLM_MODEL_NAME || basename(modelPath, ".gguf");
const threads = Number(process.env.FERRY_LLM_THREADS || 1);
const MAX_BODY = 1024 * 1024;

const { getLlama, LlamaChatSession } = await import(
  pathToFileURL(join(nodeDir, "node_modules/node-llama-cpp/dist/index.js")).href
);
// Prebuilt CPU binaries only: never build or download anything.
const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: 2048, threads });

let queue = Promise.resolve();
const server = http.createServer((req, res) => {
  queue = queue.then(() => handle(req, res)).catch((e) => {
    if (!res.headersSent) send(res, 500, errorBody(String(e?.message || e), "server_error"));
    else res.end();
  });
});
server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}/v1`);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0));

function required(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

function errorBody(message, code, type = "invalid_request_error") {
  return { error: { message, type, param: null, code } };
}

function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readBody(req) {
  const parts = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error("request body too large");
    parts.push(chunk);
  }
  return JSON.parse(Buffer.concat(parts).toString("utf8"));
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    for (const p of content) {
      if (p.type !== "text") throw new Error(`content part ${p.type} is not supported by this model`);
    }
    return content.map((p) => p.text).join("\n");
  }
  if (content == null) return "";
  throw new Error("content must be a string or parts");
}

async function handle(req, res) {
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
    return send(res, 404, errorBody(`no route ${req.method} ${req.url}`, null));
  }
  let body;
  try {
    body = await readBody(req);
  } catch (e) {
    return send(res, 400, errorBody(`We could not parse the JSON body: ${e.message}`, null));
  }
  if (body.model !== modelName) {
    return send(res, 404, errorBody(`The model \`${body.model}\` does not exist.`, "model_not_found"));
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let history, prompt;
  try {
    history = [];
    for (const m of messages.slice(0, -1)) {
      if (m.role === "system" || m.role === "developer") history.push({ type: "system", text: text(m.content) });
      else if (m.role === "user") history.push({ type: "user", text: text(m.content) });
      else if (m.role === "assistant") history.push({ type: "model", response: [text(m.content)] });
      else throw new Error(`role ${m.role} is not supported by this server`);
    }
    const last = messages[messages.length - 1];
    if (!last || last.role !== "user") throw new Error("the last message must be the user's");
    prompt = text(last.content);
  } catch (e) {
    return send(res, 400, errorBody(e.message, null));
  }
  const maxTokens = body.max_tokens ?? body.max_completion_tokens ?? 256;
  const stops = Array.isArray(body.stop) ? body.stop : typeof body.stop === "string" ? [body.stop] : [];
  const stream = body.stream === true;
  const includeUsage = stream && body.stream_options?.include_usage === true;
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices, extra = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: modelName, choices, ...extra })}\n\n`;
  if (stream) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]));
  }

  const sequence = context.getSequence();
  const session = new LlamaChatSession({ contextSequence: sequence });
  try {
    session.setChatHistory(history);
    const result = await session.promptWithMeta(prompt, {
      maxTokens,
      temperature: typeof body.temperature === "number" ? body.temperature : 0,
      customStopTriggers: stops.length ? stops : undefined,
      onTextChunk: stream
        ? (t) => res.write(chunk([{ index: 0, delta: { content: t }, finish_reason: null }]))
        : undefined,
    });
    const finish = result.stopReason === "maxTokens" ? "length" : "stop";
    const matched =
      result.stopReason === "customStopTrigger"
        ? result.customStopTrigger.filter((t) => typeof t === "string").join("")
        : null;
    const promptText = [...history.map((h) => h.text ?? h.response.join("")), prompt].join("\n");
    const usage = {
      prompt_tokens: model.tokenize(promptText).length,
      completion_tokens: model.tokenize(result.responseText).length,
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    if (stream) {
      res.write(chunk([{ index: 0, delta: {}, finish_reason: finish, stop_reason: matched }]));
      if (includeUsage) res.write(chunk([], { usage }));
      res.end("data: [DONE]\n\n");
    } else {
      send(res, 200, {
        id,
        object: "chat.completion",
        created,
        model: modelName,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: result.responseText },
            finish_reason: finish,
            stop_reason: matched,
          },
        ],
        usage,
      });
    }
  } finally {
    session.dispose();
    sequence.dispose();
  }
}
