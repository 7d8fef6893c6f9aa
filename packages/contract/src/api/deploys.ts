import { Type, type Static } from '@sinclair/typebox';
import { DEPLOY_KINDS, DEPLOY_SOURCES } from '../vocab.ts';
import { NOT_BLANK_PATTERN, RFC3339_OR_BLANK_PATTERN } from '../time.ts';
import { optText, stringEnum, TimeText } from './common.ts';

/**
 * Field caps of a deploy marker. Markers are rendered in the UI and webhooks
 * and copied into every attribution, so nothing in them may be unbounded.
 */
export const DEPLOY_LIMITS = {
  service: 256,
  environment: 128,
  host: 256,
  hosts: 1000,
  component: 256,
  version: 256,
  commit: 128,
  url: 2048,
  description: 4096,
  external_id: 256,
  at: 64,
} as const;
const LIMITS = DEPLOY_LIMITS;

const nullableString = Type.Union([Type.String(), Type.Null()]);

/** The body of POST /api/v1/deploys (api.md "Deploy markers"). */
export const DeployInput = Type.Object(
  {
    service: optText(LIMITS.service, 'the service deployed; required unless hosts are given'),
    environment: optText(LIMITS.environment),
    hosts: Type.Optional(
      Type.Unsafe<string[] | null>({
        type: 'array',
        nullable: true,
        maxItems: LIMITS.hosts,
        items: { type: 'string', maxLength: LIMITS.host },
        description:
          'hosts concerned (a kernel rollout to some hosts); required unless service is given',
      }),
    ),
    kind: stringEnum(DEPLOY_KINDS),
    component: optText(LIMITS.component, 'e.g. the dependency name ("hyper") or "kernel"'),
    from_version: optText(LIMITS.version),
    to_version: optText(LIMITS.version),
    commit: optText(LIMITS.commit),
    url: optText(LIMITS.url, 'http(s) link to the CI run or change'),
    description: optText(LIMITS.description),
    at: optText(LIMITS.at, 'RFC 3339 with timezone; default now; at most a year from now', {
      pattern: RFC3339_OR_BLANK_PATTERN,
    }),
    external_id: optText(
      LIMITS.external_id,
      'idempotency key: a repeated POST with the same external_id returns the first marker',
    ),
  },
  {
    // A non-blank service, or hosts (blank text counts as absent).
    anyOf: [
      {
        required: ['service'],
        properties: { service: { type: 'string', pattern: NOT_BLANK_PATTERN } },
      },
      { required: ['hosts'], properties: { hosts: { type: 'array', minItems: 1 } } },
    ],
  },
);
export type DeployInput = Static<typeof DeployInput>;

/** The body of PATCH /api/v1/deploys/{id} (admin). */
export const DeployPatch = Type.Object({
  at: Type.Optional(
    Type.String({
      maxLength: LIMITS.at,
      pattern: RFC3339_OR_BLANK_PATTERN,
      description: 'RFC 3339 with timezone; at most a year from now',
    }),
  ),
  description: optText(LIMITS.description),
});
export type DeployPatch = Static<typeof DeployPatch>;

/** A stored deploy marker. */
export const Deploy = Type.Object({
  id: Type.String(),
  service: nullableString,
  environment: nullableString,
  hosts: Type.Array(Type.String()),
  kind: stringEnum(DEPLOY_KINDS),
  component: nullableString,
  from_version: nullableString,
  to_version: nullableString,
  commit: nullableString,
  url: nullableString,
  description: nullableString,
  at: Type.String({ format: 'date-time' }),
  source: stringEnum(DEPLOY_SOURCES),
  external_id: nullableString,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: nullableString,
  changes: Type.Optional(
    Type.Array(
      Type.Object({
        service: Type.String(),
        host: Type.String(),
        at: Type.String({ format: 'date-time' }),
      }),
      {
        description:
          'inferred markers: each (service, host) whose telemetry showed the change, and when (first span time)',
      },
    ),
  ),
});
export type Deploy = Static<typeof Deploy>;

export const DeployListQuery = Type.Object({
  series_id: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,18}$',
      description:
        'only markers that can explain a change in this series: its service, an edge callee, or a host feeding it',
    }),
  ),
  service: Type.Optional(Type.String({ maxLength: LIMITS.service })),
  host: Type.Optional(Type.String({ maxLength: LIMITS.host })),
  kind: Type.Optional(stringEnum(DEPLOY_KINDS)),
  source: Type.Optional(stringEnum(DEPLOY_SOURCES)),
  from: Type.Optional(
    TimeText('RFC 3339, epoch ms or relative like now-7d; default: no lower bound'),
  ),
  to: Type.Optional(TimeText('RFC 3339, epoch ms or now; default: no upper bound')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 500 })),
});
export type DeployListQuery = Static<typeof DeployListQuery>;

export const DeployList = Type.Object({ deploys: Type.Array(Deploy) });
export type DeployList = Static<typeof DeployList>;

export const DeployIdParams = Type.Object({ id: Type.String({ maxLength: 20 }) });
export type DeployIdParams = Static<typeof DeployIdParams>;
