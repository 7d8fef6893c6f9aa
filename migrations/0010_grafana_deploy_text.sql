-- Up Migration

-- Deploy annotation text: a component equal to the kind says nothing twice
-- ("kernel 4.4.0-138 → 4.15.0-36 on node-2", not "kernel kernel …"; kernel
-- markers carry component "kernel"). Same columns, so dashboards are unaffected.
CREATE OR REPLACE VIEW grafana_deploy_annotations AS
SELECT d.id, d.at AS time, d.kind, d.service, d.hosts, d.component, d.from_version, d.to_version, d.source,
       concat_ws(' — ',
         concat_ws(' ',
           d.service || ':',
           d.kind,
           NULLIF(d.component, d.kind),
           CASE WHEN d.from_version IS NOT NULL OR d.to_version IS NOT NULL
                THEN coalesce(d.from_version, '?') || ' → ' || coalesce(d.to_version, '?') END,
           CASE WHEN cardinality(d.hosts) > 0
                THEN 'on ' || array_to_string(d.hosts[1:5], ', ')
                     || CASE WHEN cardinality(d.hosts) > 5 THEN format(' (+%s more)', cardinality(d.hosts) - 5) ELSE '' END END,
           '(' || left(d.commit, 12) || ')'),
         d.description,
         CASE WHEN d.source = 'inferred' THEN 'inferred from resource attributes' END,
         d.url) AS text,
       concat_ws(',', 'deploy', d.kind, d.service, d.source) AS tags
  FROM deploys d;

-- Down Migration
CREATE OR REPLACE VIEW grafana_deploy_annotations AS
SELECT d.id, d.at AS time, d.kind, d.service, d.hosts, d.component, d.from_version, d.to_version, d.source,
       concat_ws(' — ',
         concat_ws(' ',
           d.service || ':',
           d.kind,
           d.component,
           CASE WHEN d.from_version IS NOT NULL OR d.to_version IS NOT NULL
                THEN coalesce(d.from_version, '?') || ' → ' || coalesce(d.to_version, '?') END,
           CASE WHEN cardinality(d.hosts) > 0
                THEN 'on ' || array_to_string(d.hosts[1:5], ', ')
                     || CASE WHEN cardinality(d.hosts) > 5 THEN format(' (+%s more)', cardinality(d.hosts) - 5) ELSE '' END END,
           '(' || left(d.commit, 12) || ')'),
         d.description,
         CASE WHEN d.source = 'inferred' THEN 'inferred from resource attributes' END,
         d.url) AS text,
       concat_ws(',', 'deploy', d.kind, d.service, d.source) AS tags
  FROM deploys d;
