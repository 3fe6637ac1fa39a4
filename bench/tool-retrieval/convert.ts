import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isMain } from '../util.js';

/**
 * Converts public tool-retrieval sets to the tools.json / queries.jsonl formats of docs/tool-search.md. Run once,
 * by hand, on files taken from the upstream repositories at the commits SOURCE.txt names:
 *
 *   node dist/bench/tool-retrieval/convert.js <set> <upstream files> <out dir>
 *
 * Every rule below is mechanical (no query or gold answer was read to write it), so the converted sets can serve
 * as unseen data. Output: TACK_TOOL_RETRIEVAL_DIR (default ../data/tool-retrieval)/<set>/ (not in the npm package).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Tool {
  server: string;
  name: string;
  description: string;
  title?: string;
  inputSchema?: Json;
}

interface Query {
  query: string;
  gold: string[];
}

interface Catalog {
  servers?: Record<string, { title?: string; description?: string }>;
  tools: Tool[];
}

function write(out: string, catalog: Catalog, queries: Query[]): void {
  mkdirSync(out, { recursive: true });
  const seen = new Set<string>();
  for (const t of catalog.tools) {
    const key = `${t.server}/${t.name}`;
    if (seen.has(key)) throw new Error(`duplicate tool ${key}`);
    seen.add(key);
  }
  for (const q of queries)
    for (const g of q.gold) if (!seen.has(g)) throw new Error(`gold ${g} is not in the catalog (${q.query})`);
  writeFileSync(
    join(out, 'tools.json'),
    `${JSON.stringify(catalog.servers ? catalog : catalog.tools, null, 1)}\n`,
  );
  writeFileSync(join(out, 'queries.jsonl'), queries.map((q) => `${JSON.stringify(q)}\n`).join(''));
  process.stdout.write(
    `${out}: ${catalog.tools.length} tools, ${new Set(catalog.tools.map((t) => t.server)).size} servers, ${queries.length} queries\n`,
  );
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Json;

// ---------------------------------------------------------------------------------------------------------
// RestBench (Song et al. 2023, RestGPT; MIT): TMDB and Spotify, each an OpenAPI spec and queries whose
// `solution` lists the endpoints ("GET /search/person") a correct answer calls.

/** `GET /movie/{movie_id}/credits` -> `get_movie_credits`: the method and the literal path segments. */
function endpointName(method: string, path: string): string {
  const words = path.split('/').filter((s) => s !== '' && !s.startsWith('{'));
  return [method.toLowerCase(), ...words].join('_').replace(/[^A-Za-z0-9_]+/g, '_');
}

/** The upstream solutions name path parameters loosely (`/person/{movie_id}/...`): compare with them blanked. */
const endpointKey = (endpoint: string) => endpoint.trim().replace(/\{[^}]*\}/g, '{}');

function restbench(dir: string, out: string): void {
  const tools: Tool[] = [];
  const queries: Query[] = [];
  for (const server of ['tmdb', 'spotify']) {
    const spec = readJson(join(dir, `${server}_oas.json`)) as Record<string, Json>;
    const components = (spec.components ?? {}) as Record<string, Record<string, Json>>;
    const deref = (node: Json, depth = 0): Json => {
      if (depth > 6 || typeof node !== 'object' || node === null) return node;
      if (Array.isArray(node)) return node.map((n) => deref(n, depth + 1));
      const ref = node.$ref;
      if (typeof ref === 'string') {
        const [, , kind, name] = ref.split('/');
        return deref(components[kind!]?.[name!] ?? {}, depth + 1);
      }
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(v, depth + 1)]));
    };
    const byEndpoint = new Map<string, string>();
    const names = new Set<string>();
    for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, Json>>)) {
      const shared = (item.parameters ?? []) as Json[];
      for (const method of ['get', 'post', 'put', 'delete', 'patch']) {
        const op = item[method] as Record<string, Json> | undefined;
        if (!op) continue;
        const properties: Record<string, Json> = {};
        const required: string[] = [];
        for (const p of [...shared, ...((op.parameters ?? []) as Json[])].map((x) => deref(x))) {
          const param = p as Record<string, Json>;
          if (typeof param.name !== 'string') continue;
          const schema = (param.schema ?? { type: 'string' }) as Record<string, Json>;
          properties[param.name] = {
            ...schema,
            ...(typeof param.description === 'string' ? { description: param.description.trim() } : {}),
          };
          if (param.required === true) required.push(param.name);
        }
        const body = deref(op.requestBody ?? null) as Record<string, Json> | null;
        const bodySchema = (body?.content as Record<string, Record<string, Json>> | undefined)?.[
          'application/json'
        ]?.schema as Record<string, Json> | undefined;
        for (const [k, v] of Object.entries((bodySchema?.properties ?? {}) as Record<string, Json>))
          properties[k] = v;
        let name = endpointName(method, path);
        if (names.has(name))
          name = `${name}_by_${
            path
              .match(/\{(\w+)\}/g)
              ?.join('_')
              .replace(/[{}]/g, '') ?? 'id'
          }`;
        names.add(name);
        const summary = typeof op.summary === 'string' ? op.summary.trim() : '';
        const description = typeof op.description === 'string' ? op.description.trim() : '';
        tools.push({
          server,
          name,
          ...(summary ? { title: summary } : {}),
          description: description || summary,
          inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}) },
        });
        byEndpoint.set(endpointKey(`${method.toUpperCase()} ${path}`), `${server}/${name}`);
      }
    }
    for (const q of readJson(join(dir, `${server}.json`)) as Array<{ query: string; solution: string[] }>) {
      // An endpoint the spec does not have (an upstream typo such as `GET /track/{id}`) is left out of the gold,
      // and reported; a query left without gold is dropped.
      const found = q.solution.map((s) => byEndpoint.get(endpointKey(s)));
      for (const [i, f] of found.entries())
        if (!f)
          process.stderr.write(
            `${server}: "${q.solution[i]}" is not in the spec: left out of "${q.query}"\n`,
          );
      const gold = [...new Set(found.filter((f): f is string => f !== undefined))];
      if (gold.length > 0) queries.push({ query: q.query.trim(), gold });
    }
  }
  write(
    out,
    {
      servers: {
        tmdb: {
          title: 'TMDB',
          description: 'The Movie Database: movies, TV shows, people, collections and companies.',
        },
        spotify: {
          title: 'Spotify',
          description: 'Spotify Web API: music catalog, playlists, the player and user library.',
        },
      },
      tools,
    },
    queries,
  );
}

// ---------------------------------------------------------------------------------------------------------
// tau-bench (Yao et al. 2024, Sierra; MIT): the retail and airline domains. Tools are Python classes whose
// get_info() returns an OpenAI function definition as a Python literal; tasks are `Task(instruction=..., actions=
// [Action(name=...), ...])` in tasks_test.py. Gold: the distinct action names of a task.

/** A Python literal (dict, list, str with implicit concatenation, numbers, True/False/None) starting at `at`. */
function parsePython(text: string, at: number): { value: Json; end: number } {
  let i = at;
  const space = () => {
    while (i < text.length) {
      if (/\s/.test(text[i]!)) i++;
      else if (text[i] === '#') while (i < text.length && text[i] !== '\n') i++;
      else break;
    }
  };
  const string = (): string => {
    const quote = text[i]!;
    const triple = text.startsWith(quote.repeat(3), i);
    i += triple ? 3 : 1;
    let out = '';
    for (;;) {
      if (triple ? text.startsWith(quote.repeat(3), i) : text[i] === quote) {
        i += triple ? 3 : 1;
        return out;
      }
      const c = text[i++]!;
      if (c === '\\') {
        const e = text[i++]!;
        out += e === 'n' ? '\n' : e === 't' ? '\t' : e;
      } else out += c;
    }
  };
  const value = (): Json => {
    space();
    const c = text[i]!;
    if (c === '"' || c === "'") {
      let s = string();
      for (;;) {
        const save = i;
        space();
        if (text[i] === '"' || text[i] === "'") s += string();
        else {
          i = save;
          return s;
        }
      }
    }
    if (c === '(') {
      i++;
      const inner = value();
      space();
      if (text[i] !== ')') throw new Error(`expected ) at ${i}`);
      i++;
      return inner;
    }
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      const obj: Record<string, Json> = {};
      const arr: Json[] = [];
      for (;;) {
        space();
        if (text[i] === close) {
          i++;
          return c === '{' ? obj : arr;
        }
        const first = value();
        space();
        if (c === '{') {
          if (text[i] !== ':') throw new Error(`expected : at ${i}`);
          i++;
          obj[String(first)] = value();
        } else arr.push(first);
        space();
        if (text[i] === ',') i++;
      }
    }
    const word = /^[A-Za-z_][A-Za-z0-9_.]*|^-?\d+(?:\.\d+)?/.exec(text.slice(i))?.[0];
    if (!word) throw new Error(`unexpected ${text.slice(i, i + 20)}`);
    i += word.length;
    if (word === 'True') return true;
    if (word === 'False') return false;
    if (word === 'None') return null;
    const n = Number(word);
    if (!Number.isNaN(n)) return n;
    throw new Error(`unsupported name ${word}`);
  };
  const v = value();
  return { value: v, end: i };
}

function taubench(dir: string, out: string): void {
  const tools: Tool[] = [];
  const queries: Query[] = [];
  for (const domain of ['retail', 'airline']) {
    const toolDir = join(dir, domain, 'tools');
    for (const file of readdirSync(toolDir)
      .filter((f) => f.endsWith('.py') && f !== '__init__.py')
      .sort()) {
      const text = readFileSync(join(toolDir, file), 'utf8');
      const at = text.indexOf('return {', text.indexOf('def get_info'));
      const info = parsePython(text, at + 'return '.length).value as Record<string, Record<string, Json>>;
      const fn = info.function!;
      tools.push({
        server: domain,
        name: fn.name as string,
        description: fn.description as string,
        inputSchema: fn.parameters as Json,
      });
    }
    const text = readFileSync(join(dir, domain, 'tasks_test.py'), 'utf8');
    const known = new Set(tools.filter((t) => t.server === domain).map((t) => t.name));
    for (const chunk of text.split(/\bTask\(/).slice(1)) {
      const at = chunk.indexOf('instruction=');
      const instruction = parsePython(chunk, at + 'instruction='.length).value as string;
      const gold = [...new Set([...chunk.matchAll(/Action\(\s*name="([^"]+)"/g)].map((m) => m[1]!))].filter(
        (n) => known.has(n),
      );
      if (gold.length === 0) continue;
      queries.push({ query: instruction.trim(), gold: gold.map((n) => `${domain}/${n}`) });
    }
  }
  write(
    out,
    {
      servers: {
        retail: {
          title: 'Retail',
          description: 'An online retail store: users, orders, products, returns and exchanges.',
        },
        airline: {
          title: 'Airline',
          description: 'An airline: users, flights, reservations, baggage and certificates.',
        },
      },
      tools,
    },
    queries,
  );
}

// ---------------------------------------------------------------------------------------------------------
// ToolLens (Qu et al. 2024, COLT): 464 RapidAPI endpoints of ToolBench (Apache-2.0) under 314 ToolBench tools,
// and queries needing 3 of them. corpus.jsonl packs each endpoint as "category_name:..., tool_name:...,
// api_name:..., api_description:..., required_params: [...], optional_params: [...], return_schema: ...". A
// ToolBench tool (one RapidAPI service with its endpoints) is a server here; its category describes it.

function toollens(dir: string, out: string): void {
  const CORPUS =
    /^category_name:(.*?), tool_name:(.*?), api_name:(.*?), api_description:(.*?), required_params: (\[.*?\]), optional_params: (\[.*?\]), return_schema: /s;
  const byId = new Map<string, string>();
  const tools: Tool[] = [];
  const servers: Record<string, { description: string }> = {};
  const serverName = (name: string) =>
    name
      .trim()
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '');
  const seen = new Set<string>();
  for (const line of readFileSync(join(dir, 'corpus.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const doc = JSON.parse(line) as { _id: string; text: string };
    const m = CORPUS.exec(doc.text);
    if (!m) throw new Error(`corpus ${doc._id}: unexpected text`);
    const [, category, toolName, apiName, apiDescription, required, optional] = m;
    const server = serverName(toolName!);
    servers[server] = { description: `${toolName!.trim()} (${category!.replace(/_/g, ' ')})` };
    let name =
      apiName!
        .trim()
        .replace(/[^A-Za-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '') || `api_${doc._id}`;
    if (seen.has(`${server}/${name}`)) name = `${name}_${doc._id}`;
    seen.add(`${server}/${name}`);
    const properties: Record<string, Json> = {};
    const req: string[] = [];
    for (const [list, isRequired] of [
      [required!, true],
      [optional!, false],
    ] as const) {
      for (const p of JSON.parse(list) as Array<{ name: string; type?: string; description?: string }>) {
        properties[p.name] = {
          type: (p.type ?? 'string').toLowerCase(),
          ...(p.description ? { description: p.description } : {}),
        };
        if (isRequired) req.push(p.name);
      }
    }
    tools.push({
      server,
      name,
      title: apiName!.trim(),
      description: apiDescription!.trim(),
      inputSchema: { type: 'object', properties, ...(req.length ? { required: req } : {}) },
    });
    byId.set(doc._id, `${server}/${name}`);
  }
  const text = new Map<string, string>();
  for (const line of readFileSync(join(dir, 'queries.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const q = JSON.parse(line) as { _id: string; text: string };
    text.set(q._id, q.text);
  }
  const gold = new Map<string, Set<string>>();
  for (const line of readFileSync(join(dir, 'qrels', 'test.tsv'), 'utf8')
    .split('\n')
    .slice(1)) {
    const [qid, cid] = line.split('\t');
    if (!qid || !cid) continue;
    const set = gold.get(qid) ?? new Set<string>();
    set.add(byId.get(cid.trim())!);
    gold.set(qid, set);
  }
  const queries = [...gold].map(([qid, set]) => ({ query: text.get(qid)!.trim(), gold: [...set] }));
  write(out, { servers, tools }, queries);
}

// ---------------------------------------------------------------------------------------------------------
// APIBench (Patil et al. 2023, Gorilla; Apache-2.0): machine-learning models of three hubs as tools, and
// generated requests each answered by one model. data/api/<hub>_api.jsonl is the catalog (one model per line:
// domain, functionality, api_name, api_call, description); data/apibench/<hub>_{eval,train}.json the requests
// (`code` opens with "###Instruction: <request>\n###Output:", or in torchhub_train.json with "{'Instruction':
// <request>, 'Output':"; `api_data.api_call` names the model). A hub is a
// server; a model is found by its api_call (TensorFlow Hub's api_name is always "model_id", so its name is the
// last words of the model's URL); a request whose api_call is not in the catalog is left out.

function apibench(dir: string, out: string): void {
  const HUBS = [
    { server: 'huggingface', catalog: 'huggingface_api.jsonl', requests: ['huggingface_eval.json'] },
    { server: 'tensorflowhub', catalog: 'tensorflowhub_api.jsonl', requests: ['tensorflow_eval.json'] },
    {
      server: 'torchhub',
      catalog: 'torchhub_api.jsonl',
      requests: ['torchhub_eval.json', 'torchhub_train.json'],
    },
  ];
  const callKey = (call: string) => call.replace(/\s+/g, '');
  const lines = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as Record<string, Json>);
  const text = (value: Json | undefined) => (typeof value === 'string' ? value.trim() : '');
  const tools: Tool[] = [];
  const queries: Query[] = [];
  for (const hub of HUBS) {
    const byCall = new Map<string, string>();
    const seen = new Set<string>();
    for (const api of lines(join(dir, 'api', hub.catalog))) {
      const call = text(api.api_call);
      if (!call || byCall.has(callKey(call))) continue;
      const url = /tfhub\.dev\/([^'"]+)/.exec(call)?.[1];
      const raw = hub.server === 'tensorflowhub' && url ? url.replace(/\/\d+$/, '') : text(api.api_name);
      let name = raw.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '') || `model_${tools.length}`;
      for (let n = 2; seen.has(name); n++) name = `${name.replace(/_\d+$/, '')}_${n}`;
      seen.add(name);
      const description = [text(api.domain), text(api.functionality), text(api.description)]
        .filter(Boolean)
        .join('. ');
      tools.push({ server: hub.server, name, description });
      byCall.set(callKey(call), `${hub.server}/${name}`);
    }
    for (const file of hub.requests)
      for (const entry of lines(join(dir, 'apibench', file))) {
        const code = text(entry.code);
        const request = (/###Instruction:(.*?)###Output/s.exec(code) ??
          /'Instruction':(.*?),\s*'Output'/s.exec(code))?.[1]?.trim();
        const data = entry.api_data;
        const call = data && typeof data === 'object' && !Array.isArray(data) ? text(data.api_call) : '';
        const gold = byCall.get(callKey(call));
        if (request && gold) queries.push({ query: request, gold: [gold] });
      }
  }
  write(out, { tools }, queries);
}

const SETS: Record<string, (dir: string, out: string) => void> = { restbench, taubench, toollens, apibench };

if (isMain(import.meta.url)) {
  const [set, dir, out] = process.argv.slice(2);
  const convert = set ? SETS[set] : undefined;
  if (!convert || !dir || !out) {
    process.stderr.write(`usage: convert.js <${Object.keys(SETS).join('|')}> <upstream dir> <out dir>\n`);
    process.exit(2);
  }
  convert(dir, out);
}
