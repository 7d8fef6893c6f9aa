/**
 * The Explorer's pickers: the URL's partial choice (service, op, view, name, peer). Which
 * options each picker offers, which later choices a new one drops and which series a choice
 * designates are the server's (`GET /api/v1/series/options`, over every series).
 */
import type { Series } from '@onset/contract';

export interface Selection {
  service?: string;
  op?: string;
  view?: string;
  name?: string;
  peer?: string;
}

/** The URL choice that designates exactly this series. */
export function selectionOf(s: Series): Required<Selection> {
  return { service: s.service, op: s.op, view: s.view, name: s.name, peer: s.peer ?? '' };
}
