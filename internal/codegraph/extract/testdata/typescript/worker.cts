// CommonJS TypeScript (.cts): require, exports, prototype-free classes.
import fs = require('fs');
import type { Job } from './job';
const { parentPort, workerData } = require('worker_threads');
const path: typeof import('path') = require('path');

interface JobHandler {
  (job: Job): Promise<void>;
  readonly name: string;
}

const handlers: Record<string, JobHandler> = {} as Record<string, JobHandler>;

export const registry = {
  register(name: string, handler: JobHandler): void {
    handlers[name] = handler;
  },
  get: (name: string): JobHandler | undefined => handlers[name],
  builtin: {
    async noop(): Promise<void> {},
    log: async (job: Job) => {
      await fs.promises.appendFile(path.join(workerData.dir, 'jobs.log'), JSON.stringify(job));
    },
  },
};

async function run(job: Job): Promise<void> {
  const handler = registry.get(job.kind) ?? registry.builtin.noop;
  await handler(job);
  parentPort?.postMessage({ done: job.id });
}

parentPort?.on('message', (job: Job) => {
  run(job).catch((err: Error) => parentPort!.postMessage({ error: err.message }));
});

exports.run = run;
module.exports.shutdown = function shutdown(code = 0): never {
  process.exit(code);
};
