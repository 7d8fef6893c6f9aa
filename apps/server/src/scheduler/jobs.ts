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
  /**
   * Work every server runs for itself (not once per cluster), started and
   * stopped with the scheduler. `report` tells an outage of the database
   * (logged once by the scheduler; true) from another failure (false).
   */
  perServer?: Array<{
    start: (report: (err: unknown, what: string) => boolean) => Promise<void>;
    stop: () => Promise<void>;
  }>;
}
