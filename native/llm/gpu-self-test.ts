/**
 * A llama.cpp build's self-test, run in a child process before the service trusts it in its own.
 *
 * Why: a CUDA build can load, list the GPU and place the layers, then abort the whole process at the first decode.
 * Seen on an H200 with driver 580 (CUDA 13.0): node-llama-cpp 3.22.1's prebuilt CUDA build carries no sm_90 code,
 * only PTX from a newer toolkit, and the driver refuses it ("the provided PTX was compiled with an unsupported
 * toolchain", then ggml_abort). In the service that abort would take every request down with it; here it takes
 * down a child, and the service runs on the CPU and says why.
 *
 * The child loads the model with one layer offloaded (the kernels a decode uses, for little GPU memory), decodes
 * a few tokens, and reports (gpu-self-test-child.ts).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type SelfTestGpu = 'cuda' | false;

export type SelfTestResult = { ok: true; gpu: string | false; offloadedLayers: number } | { ok: false; reason: string };

/** What the child sends back once its decode ran. */
export interface ChildReport {
  gpu: string | false;
  offloadedLayers: number;
}

/** Lines llama.cpp and node-llama-cpp print on a failure; the last such line is the reason shown. */
const ERROR_LINE = /error|abort|fail|unsupported|not compatible|out of memory/i;

/** From source (vitest, tsx) the child runs through tsx; in dist/ tsup builds it as gpu-self-test-child.js beside this chunk. */
function childEntry(): { file: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const file = fileURLToPath(new URL(fromSource ? './gpu-self-test-child.ts' : './gpu-self-test-child.js', import.meta.url));
  return { file, execArgv: fromSource ? ['--import', 'tsx'] : [] };
}

/** A native backtrace frame ("/path/lib.so(symbol+0x1c)[0x7f...]"), or a source location printed before the message. */
const FRAME_LINE = /^(\.{0,2}\/\S*)(\(|:\d+:)|\[0x[0-9a-f]+\]$/i;

/**
 * The reason shown for a failed self-test, from the child's output: its last failure line, loggers' prefixes and
 * backtrace frames left out; a bare error name (NoBinaryFoundError) gets the line before it as its reason.
 */
export function failureReason(output: string, fallback: string): string {
  const lines = output.split('\n').map((line) => line.replace(/^(\[[\w-]+\]\s*)+(llama\.cpp:\s*)?/, '').trim());
  const failures = lines.filter((line) => ERROR_LINE.test(line) && !FRAME_LINE.test(line) && !/^at /.test(line));
  const last = failures.at(-1);
  const bare = last?.match(/^error: (\w+Error)$/);
  const reason = bare && failures.length > 1 ? `${failures.at(-2)} (${bare[1]})` : (last ?? fallback);
  return reason.slice(0, 300);
}

/** Runs the self-test in a child process; a crash, a signal, an error or the time limit are a failure with its reason. */
export function selfTestGpu(modelPath: string, gpu: SelfTestGpu, timeoutMs = 120_000): Promise<SelfTestResult> {
  const { file, execArgv } = childEntry();
  return new Promise((resolve) => {
    const child = fork(file, [modelPath, String(gpu)], { execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    let output = '';
    let report: ChildReport | undefined;
    const collect = (chunk: Buffer) => void (output = (output + chunk.toString('utf8')).slice(-20_000));
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.on('message', (message) => void (report = message as ChildReport));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => void (output += `\nfailed to start: ${err.message}`));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && report) resolve({ ok: true, ...report });
      else if (signal === 'SIGKILL' && !report) resolve({ ok: false, reason: `no answer within ${timeoutMs} ms` });
      else resolve({ ok: false, reason: failureReason(output, signal ? `the test process died (${signal})` : `the test process exited with ${code}`) });
    });
  });
}
