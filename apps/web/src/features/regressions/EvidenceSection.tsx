import { useRegressionEvidence } from './api.ts';
import { ErrorState, Loading } from '../../components/States.tsx';
import { Panel } from '../../components/Controls.tsx';
import { AttributeTable, ExemplarTable, HintList } from './EvidencePanel.tsx';

/** Hints, attribute lifts and exemplars from GET /api/v1/regressions/:id/evidence. */
export function EvidenceSection({ id }: { id: string }) {
  const evidence = useRegressionEvidence(id);
  if (evidence.isLoading) return <Panel title="Evidence">{<Loading />}</Panel>;
  if (evidence.error || !evidence.data)
    return (
      <Panel title="Evidence">
        <ErrorState
          error={evidence.error}
          what="the evidence"
          onRetry={() => void evidence.refetch()}
        />
      </Panel>
    );
  const e = evidence.data;
  return (
    <>
      <Panel title="Likely mechanism">
        <HintList hints={e.hints} />
      </Panel>
      <Panel title="What the slow calls after the onset have in common">
        <AttributeTable lifts={e.attributes} />
      </Panel>
      <Panel title="Example calls">
        <ExemplarTable exemplars={e.exemplars} />
      </Panel>
    </>
  );
}
