export default function SlosPage() {
  return <div className="page"><h1>SlosPage</h1></div>;
}
