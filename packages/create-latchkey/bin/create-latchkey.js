#!/usr/bin/env node
// `npm create latchkey <directory>`: generates a project.
await import('../dist/main.js');
