export default function SettingsPage() {
  return <div className="page"><h1>SettingsPage</h1></div>;
}
