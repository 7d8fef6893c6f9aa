export default function SloDetailPage() {
  return <div className="page"><h1>SloDetailPage</h1></div>;
}
