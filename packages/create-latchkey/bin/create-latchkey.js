#!/usr/bin/env node
// `npm create latchkey <directory>`: generates a project. The generator ships TypeScript sources,
// so this registers tsx's loader before importing them.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
