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

  it('a failing task rejects its own promise only', async () => {
    const tasks = new BackgroundTasks();
    const failing = tasks.run(() => Promise.reject(new Error('smtp down')));
    await expect(failing).rejects.toThrow('smtp down');
    await expect(tasks.idle()).resolves.toBeUndefined();
  });
});
