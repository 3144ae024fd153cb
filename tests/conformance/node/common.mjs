// What every Node set-up shares: the git tool's behaviour and the run protocol, the same
// as tests/conformance/setups/_common.py (tests/unit/test_conformance_node_common.py
// checks that the two agree, so a change to one must be made to the other).
//
// The run protocol: the harness starts `node tests/conformance/node/<name>.mjs` with
// - OTEL_EXPORTER_OTLP_ENDPOINT (and OTEL_EXPORTER_OTLP_PROTOCOL), OTEL_SERVICE_NAME: the
//   exporter is configured by these alone, as a user would configure it;
// - OPENAI_BASE_URL / OPENAI_API_KEY: the scripted LLM;
// - CONFORMANCE_CASES: JSON {case: [user message, ...]}, each list one conversation.
// The set-up runs each conversation with its framework, flushes its spans and prints one
// JSON line {"versions": {...}, "ran": [case, ...], "errors": {case: text}} last.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const FAILURE_TEXT =
  "push rejected: the remote has commits you do not have; nothing was pushed";

const sha1 = (text) => createHash("sha1").update(text, "utf8").digest("hex");

/** The 40-hex commit a successful push of `branch` to `repo` reports. */
export const commitSha = (repo, branch) => sha1(`${repo}@${branch}`);

/** A well-formed commit that no push reported: what a `fab` reply cites. */
export const fabricatedSha = (repo, branch) => sha1(`fabricated:${repo}@${branch}`);

/** How a push to `repo` fails: "raise", "type", "object", or null when it succeeds. */
export function failureMode(repo) {
  const name = repo.split("/").pop();
  for (const mode of ["raise", "type", "object"]) {
    if (name.endsWith(`err-${mode}`)) return mode;
  }
  return null;
}

/** The plain error a failing push throws. */
export class PushRejected extends Error {
  constructor(message = FAILURE_TEXT) {
    super(message);
    this.name = "PushRejected";
  }
}

/** The git tool's body, for the `raise` and `object` failures and for success. A set-up
 * throws its framework's own tool-error type for `type` before calling this. */
export function push(repo, branch) {
  const mode = failureMode(repo);
  if (mode === "raise" || mode === "type") throw new PushRejected();
  if (mode === "object") return { ok: false, error: FAILURE_TEXT };
  return { ok: true, repo, branch, commit: commitSha(repo, branch) };
}

/** The conversations to run, from CONFORMANCE_CASES. */
export const cases = () => JSON.parse(process.env.CONFORMANCE_CASES ?? "{}");

/** Installed versions of the named npm packages (the npm folder's node_modules). */
export function versions(packages) {
  const found = {};
  for (const name of packages) {
    try {
      const manifest = join(import.meta.dirname, "node_modules", name, "package.json");
      found[name] = JSON.parse(readFileSync(manifest, "utf8")).version;
    } catch {
      found[name] = "missing";
    }
  }
  found.node = process.versions.node;
  return found;
}

/** Run every requested conversation (`await conversation(case, messages)`), flush the
 * spans and print the result line. A conversation that throws is reported, not fatal: the
 * turns of the others still count. `supported` maps cases this set-up cannot express to
 * false. */
export async function run(conversation, { packages, flush, supported = {} }) {
  const ran = [];
  const errors = {};
  const skipped = [];
  for (const [name, messages] of Object.entries(cases())) {
    if (supported[name] === false) {
      skipped.push(name);
      continue;
    }
    try {
      await conversation(name, messages);
      ran.push(name);
    } catch (error) {
      errors[name] = error?.stack ?? String(error);
    }
  }
  await flush();
  const result = { versions: versions(packages), ran, errors, unsupported: skipped };
  process.stdout.write(`\n${JSON.stringify(result)}\n`);
}
