// Bootstrap of a decode worker thread: the server is TypeScript run through tsx, and a worker
// thread does not always inherit the loader (under test runners it does not), so register it here.
import { register } from 'tsx/esm/api';

register();
const { default: decode } = await import('./decode-worker.ts');
export default decode;
