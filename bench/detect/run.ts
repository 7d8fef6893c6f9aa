/** npm run bench:detect: the DB-backed detection pass benchmark (bench/detect/pass.ts). */
import './pass.ts';
