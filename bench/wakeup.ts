import { fork } from 'node:child_process';
import net from 'node:net';

/**
 * What a hop costs when the process it wakes has been idle, on this machine: the benchmark's 20 ms
 * emulator leaves every process idle between calls, and each process the graph adds pays it.
 *
 *   node --import tsx bench/wakeup.ts
 *
 * Two node processes on loopback. The client sends a byte; the echo process answers it at once
 * ("echo") or after a fixed piece of CPU work ("work": JSON of 300 objects, three times). Each is
 * timed back to back, then with the processes idle 20 ms before every exchange.
 */
const ROUNDS = { busy: 3000, idle: 200 };
const IDLE_MS = 20;

function work(): number {
  const rows = Array.from({ length: 300 }, (_, index) => ({ id: `u${index}`, name: `User ${index}`, tags: ['a', 'b'], score: index * 1.5 }));
  let size = 0;
  for (let round = 0; round < 3; round += 1) size += JSON.stringify(JSON.parse(JSON.stringify(rows))).length;
  return size;
}

if (process.argv[2] === 'echo') {
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', (data) => {
      if (data[0] === 0x65) return void socket.write('e');
      const started = performance.now();
      work();
      socket.write(JSON.stringify({ workMs: performance.now() - started }));
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as net.AddressInfo).port));
} else {
  const child = fork(new URL(import.meta.url).pathname, ['echo'], { execArgv: process.execArgv });
  const port = await new Promise<number>((resolve) => child.once('message', (message) => resolve(message as number)));
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once('connect', resolve));
  const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;

  async function exchange(kind: 'e' | 'w'): Promise<{ roundTripMs: number; workMs: number }> {
    const started = performance.now();
    socket.write(kind);
    const answer = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    return { roundTripMs: performance.now() - started, workMs: kind === 'w' ? (JSON.parse(answer.toString('utf8')) as { workMs: number }).workMs : 0 };
  }

  console.log(`${'exchange'.padEnd(10)}${'processes'.padEnd(22)}${'round trip p50 ms'.padStart(18)}${'work in the echo process p50 ms'.padStart(34)}`);
  for (const kind of ['e', 'w'] as const) {
    for (const idle of [false, true]) {
      const results: { roundTripMs: number; workMs: number }[] = [];
      for (let index = 0; index < (idle ? ROUNDS.idle : ROUNDS.busy); index += 1) {
        if (idle) await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        results.push(await exchange(kind));
      }
      const label = `${(kind === 'e' ? 'echo' : 'work').padEnd(10)}${(idle ? `idle ${IDLE_MS} ms before each` : 'back to back').padEnd(22)}`;
      const work = kind === 'w' ? median(results.map((result) => result.workMs)).toFixed(3).padStart(34) : '';
      console.log(`${label}${median(results.map((result) => result.roundTripMs)).toFixed(3).padStart(18)}${work}`);
    }
  }
  socket.destroy();
  child.kill();
}
