// The Vercel AI SDK's column of the client matrix (tests/live/client_matrix.py): each cell
// asks `chatx serve` for one capture (named in X-Chatx-Capture) through one of the SDK's
// models, with streamText or generateText, and says on one line of JSON what the SDK
// read: its text, reasoning, tool calls, finish and any error. The Python side judges.
//
//   node vercel_ai.mjs < cells.json    (a JSON array of {url, capture, client})
//
// The packages come from $CHATX_NODE_MODULES (a node_modules directory), else from
// node_modules beside this script (`npm install --prefix tests/live/node`).

import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.CHATX_NODE_MODULES || join(here, "node_modules");
// Resolved from that directory, wherever this script is.
const require = createRequire(join(modules, "chatx-matrix.cjs"));
const { streamText, generateText } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const { createAnthropic } = require("@ai-sdk/anthropic");
const { createOpenAICompatible } = require("@ai-sdk/openai-compatible");

const HEADER = "x-chatx-capture";
// The SDK's warnings (an unknown model's max tokens) are no part of what a cell read.
globalThis.AI_SDK_LOG_WARNINGS = false;

// client name -> (url, capture) -> the model the SDK calls.
const MODELS = {
  chat: (url, headers) => createOpenAI({ baseURL: `${url}/v1`, apiKey: "k", headers }).chat("m"),
  responses: (url, headers) =>
    createOpenAI({ baseURL: `${url}/v1`, apiKey: "k", headers }).responses("m"),
  anthropic: (url, headers) =>
    createAnthropic({ baseURL: `${url}/v1`, apiKey: "k", headers })("m"),
  compatible: (url, headers) =>
    createOpenAICompatible({ name: "chatx", baseURL: `${url}/v1`, apiKey: "k", headers }).chatModel(
      "m",
    ),
};

function describe(error) {
  if (error == null) return null;
  // An error part of a stream may be the provider's error object itself.
  const name = error.name || (typeof error === "object" ? "error part" : typeof error);
  const said = { name, message: String(error.message || JSON.stringify(error)) };
  if (typeof error.statusCode === "number") said.status = error.statusCode;
  // Where a response failed the SDK's schema: the paths of the places it refused.
  const issues = [];
  for (let cause = error.cause; cause != null && issues.length === 0; cause = cause.cause) {
    for (const issue of cause.issues || []) issues.push(issue.path);
  }
  if (issues.length) said.refused = issues;
  return said;
}

function call(part) {
  return {
    name: part.toolName,
    input: part.input,
    invalid: Boolean(part.invalid),
    provider: Boolean(part.providerExecuted),
  };
}

async function streamed(model) {
  const read = { text: "", reasoning: "", calls: [], finish: null, raw: null, errors: [] };
  const result = streamText({ model, prompt: "hi", maxRetries: 0, onError: () => {} });
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") read.text += part.text;
    else if (part.type === "reasoning-delta") read.reasoning += part.text;
    else if (part.type === "tool-call") read.calls.push(call(part));
    else if (part.type === "error") read.errors.push(describe(part.error));
    else if (part.type === "finish") {
      read.finish = part.finishReason;
      read.raw = part.rawFinishReason ?? null;
    }
  }
  return read;
}

async function generated(model) {
  const result = await generateText({ model, prompt: "hi", maxRetries: 0 });
  const calls = result.content.filter((part) => part.type === "tool-call").map(call);
  return {
    text: result.text,
    reasoning: result.reasoningText ?? "",
    calls,
    finish: result.finishReason,
    raw: result.rawFinishReason ?? null,
    errors: [],
  };
}

async function cell({ url, capture, client }) {
  const [kind, how] = client.split(" ");
  const model = MODELS[kind](url, { [HEADER]: capture });
  try {
    return { ...(await (how === "stream" ? streamed(model) : generated(model))), thrown: null };
  } catch (error) {
    return { text: "", reasoning: "", calls: [], finish: null, raw: null, errors: [], thrown: describe(error) };
  }
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
for (const asked of JSON.parse(input)) {
  process.stdout.write(`${JSON.stringify({ ...asked, ...(await cell(asked)) })}\n`);
}
