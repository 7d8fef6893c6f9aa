import type { TaskList } from 'graphile-worker';

/**
 * What a feature hands the scheduler: its graphile-worker tasks, their cron
 * lines, and tasks to queue once when the runner starts (work that must not
 * wait for the first cron minute). The scheduler only composes these.
 */
export interface FeatureJobs {
  tasks: TaskList;
  crontab: string[];
  startup?: Array<{ task: string; jobKey: string }>;
}
