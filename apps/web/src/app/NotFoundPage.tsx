import { Link, useLocation } from 'react-router-dom';

export default function NotFoundPage() {
  const { pathname } = useLocation();
  return (
    <div className="page">
      <h1>Nothing here</h1>
      <p>
        <code>{pathname}</code> is not a page of Onset. Go to the <Link to="/">overview</Link>.
      </p>
    </div>
  );
}
