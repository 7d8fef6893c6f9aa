/** Settings: alert webhooks, silences, and the API token of this browser; each a feature of its own. */
import { WebhooksPanel } from '../webhooks/WebhooksPanel.tsx';
import { SilencesPanel } from '../silences/SilencesPanel.tsx';
import { TokenSettings } from '../access/TokenSettings.tsx';

export default function SettingsPage() {
  return (
    <div className="page">
      <div className="page-head">
        <h1>Settings</h1>
      </div>
      <WebhooksPanel />
      <SilencesPanel />
      <TokenSettings />
    </div>
  );
}
