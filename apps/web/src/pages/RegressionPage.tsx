export default function RegressionPage() {
  return <div className="page"><h1>RegressionPage</h1></div>;
}
