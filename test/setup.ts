import { setDefaultTimeout } from 'bun:test';

// Machines are shared and noisy; tests that spawn the CLI or build the binary need slack.
// No test asserts on time: a generous ceiling only turns a hang into a failure.
setDefaultTimeout(60_000);
