export default function OverviewPage() {
  return <div className="page"><h1>OverviewPage</h1></div>;
}
