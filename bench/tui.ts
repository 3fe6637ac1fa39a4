import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { isMain, log, p50p99, repoRoot, sleep, tempDir } from './util.js';

/**
 * Input latency of `tack chat` (issue 20: under 50 ms per keystroke while an answer streams), measured through a
 * real pseudo-terminal (`script`): a key is written to the terminal, and the time runs until the terminal's output
 * shows the typed text. The model is a local server streaming an Anthropic Messages answer, one text delta every
 * 10 ms, for as long as the keys are typed.
 *
 *   full screen, answer streaming   the case the issue names
 *   full screen, idle               the same keys with nothing streaming
 *   --plain, answer streaming       the line mode: the terminal itself echoes (the floor a TUI cannot beat)
 *
 * The three run in turn (A B C A B C ...), so a drifting machine weighs on all alike.
 */
export interface TuiOptions {
  rounds?: number;
  keysPerRound?: number;
}

const BIN = join(repoRoot, 'bin', 'tack.js');
const DELTA_MS = 10;

/** A model that streams words until the request closes (the chat interrupted, or the bench done). */
function streamingModel(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_bench' });
      const send = (event: Record<string, unknown>) =>
        res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
      send({
        type: 'message_start',
        message: {
          id: 'msg_bench',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 100, output_tokens: 1 },
        },
      });
      send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      let n = 0;
      const timer = setInterval(() => {
        n++;
        // Markdown with a code block every so often: the renderer's real work, not plain words.
        const text = n % 40 === 0 ? '\n\n```ts\nconst x = 1;\n```\n\n' : `word${n} **bold** `;
        send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
        // Stops after a minute at most, whatever happens.
        if (n > 6000) finish();
      }, DELTA_MS);
      const finish = () => {
        clearInterval(timer);
        if (res.writableEnded) return;
        send({ type: 'content_block_stop', index: 0 });
        send({
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: n },
        });
        send({ type: 'message_stop' });
        res.end();
      };
      res.on('close', () => clearInterval(timer));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server }),
    ),
  );
}

type Mode = 'full-streaming' | 'full-idle' | 'plain-streaming';

async function round(mode: Mode, url: string, keys: number): Promise<number[]> {
  const home = tempDir('tack-bench-tui-');
  const args = [
    'chat',
    '--model',
    'anthropic:claude-sonnet-4-5',
    ...(mode === 'plain-streaming' ? ['--plain'] : []),
  ];
  const command = `stty cols 120 rows 40; exec ${[process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: home.dir,
    env: {
      ...process.env,
      TACK_HOME: join(home.dir, 'home'),
      TERM: 'xterm-256color',
      ANTHROPIC_API_KEY: 'bench',
      ANTHROPIC_BASE_URL: url,
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let output = '';
  let since = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const until = async (test: () => boolean, what: string, ms = 20_000) => {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`tui bench (${mode}): no ${what} within ${ms} ms`);
      await sleep(1);
    }
  };
  const plain = () => stripVTControlCharacters(output.slice(since));
  try {
    await until(() => /ctx \d|> $/m.test(stripVTControlCharacters(output)), 'prompt');
    if (mode !== 'full-idle') {
      child.stdin.write('stream');
      await sleep(200);
      child.stdin.write('\r');
      await until(() => stripVTControlCharacters(output).includes('word20 '), 'streamed answer');
    }
    const samples: number[] = [];
    let typed = '';
    for (let i = 0; i < keys; i++) {
      const key = 'qzxjkv'[i % 6]!;
      typed += key;
      since = output.length;
      const started = performance.now();
      child.stdin.write(key);
      // The full screen redraws the input line with all that was typed; the terminal echoes just the key.
      const shown = mode === 'plain-streaming' ? key : typed.slice(-Math.min(typed.length, 12));
      await until(() => plain().includes(shown), `echo of key ${i}`, 5000);
      samples.push(performance.now() - started);
      await sleep(30 + Math.random() * 40);
    }
    return samples;
  } finally {
    child.kill('SIGKILL');
    home.remove();
  }
}

export async function runTui(options: TuiOptions = {}): Promise<Record<string, unknown>> {
  const rounds = options.rounds ?? 3;
  const keys = options.keysPerRound ?? 40;
  const { url, server } = await streamingModel();
  const samples: Record<Mode, number[]> = { 'full-streaming': [], 'full-idle': [], 'plain-streaming': [] };
  try {
    for (let r = 0; r < rounds; r++)
      for (const mode of Object.keys(samples) as Mode[]) {
        log(`tui: round ${r + 1}/${rounds}, ${mode}`);
        for (const ms of await round(mode, url, keys)) samples[mode].push(ms);
      }
  } finally {
    server.closeAllConnections();
    server.close();
  }
  const summary = (values: number[]) => ({
    keys: values.length,
    ...p50p99(
      [...values].sort((a, b) => a - b),
      1,
    ),
    maxMs: Math.round(values.reduce((m, v) => Math.max(m, v), 0)),
  });
  return {
    what: 'ms from a key written to the pty until the terminal output shows it (tack chat, 120x40)',
    deltaEveryMs: DELTA_MS,
    rounds,
    fullScreenStreaming: summary(samples['full-streaming']),
    fullScreenIdle: summary(samples['full-idle']),
    plainStreaming: summary(samples['plain-streaming']),
    targetMs: 50,
  };
}

if (isMain(import.meta.url)) process.stdout.write(`${JSON.stringify(await runTui(), null, 2)}\n`);
