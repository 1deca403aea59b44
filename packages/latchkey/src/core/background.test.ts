import { describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background.js';

describe('background tasks', () => {
  it('start after the caller has moved on, and idle() waits for them and the tasks they start', async () => {
    const tasks = new BackgroundTasks();
    const order: string[] = [];
    const result = tasks.run(() => {
      order.push('task');
      void tasks.run(() => {
        order.push('nested');
        return Promise.resolve();
      });
      return Promise.resolve(42);
    });
    order.push('caller');
    await tasks.idle();
    expect(order).toEqual(['caller', 'task', 'nested']);
    expect(await result).toBe(42);
  });

  it('hold a task started for an answer until the answer has been sent, while others start at once', async () => {
    const tasks = new BackgroundTasks();
    const order: string[] = [];
    const record = (what: string) => () => {
      order.push(what);
      return Promise.resolve();
    };
    let send = (): void => undefined;
    const answered = new Promise<void>((resolve) => (send = resolve));
    void tasks.afterAnswer(answered).run(record('after the answer'));
    void tasks.run(record('soon'));
    // A turn of the event loop later the other task has run; the held one still waits.
    await new Promise((resolve) => setImmediate(resolve));
    order.push('answer sent');
    send();
    await tasks.idle();
    expect(order).toEqual(['soon', 'answer sent', 'after the answer']);
  });

  it('run a held task even when its answer failed, and idle() waits for it', async () => {
    const tasks = new BackgroundTasks();
    const answered = Promise.reject(new Error('the client went away'));
    const result = tasks.afterAnswer(answered).run(() => Promise.resolve('done'));
    await tasks.idle();
    expect(await result).toBe('done');
  });

  it('a failing task rejects its own promise only', async () => {
    const tasks = new BackgroundTasks();
    const failing = tasks.run(() => Promise.reject(new Error('smtp down')));
    await expect(failing).rejects.toThrow('smtp down');
    await expect(tasks.idle()).resolves.toBeUndefined();
  });
});
