// The page of an account link (the first-start link is one): email, name and password of the new
// account. The link's token is in the URL fragment, which the browser never sends; the page posts it with the form.
export const ACCOUNT_SETUP_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Create your account</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 26rem; margin: 3rem auto; padding: 0 1rem; }
label { display: block; margin-top: 1rem; }
input { display: block; width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
button { margin-top: 1.5rem; padding: .5rem 1.5rem; font: inherit; }
[role=alert] { color: #a00; }
</style>
</head>
<body>
<main>
<h1>Create your account</h1>
<p>This link works once, for one account of the organization it was made for.</p>
<form id="account">
<label>Email <input name="email" type="email" autocomplete="username" required></label>
<label>Name <input name="name" autocomplete="name"></label>
<label>Password (at least 8 characters) <input name="password" type="password" autocomplete="new-password" minlength="8" required></label>
<button type="submit">Create account</button>
</form>
<p id="status" role="status"></p>
<p id="error" role="alert"></p>
</main>
<script>
const form = document.getElementById('account');
const token = location.hash.slice(1);
history.replaceState(null, '', location.pathname);
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const data = Object.fromEntries(new FormData(form));
  document.getElementById('error').textContent = '';
  const post = (url, body) => fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const made = await post('/api/auth/account-link', { token, ...data });
  if (!made.ok) {
    const body = await made.json().catch(() => ({}));
    document.getElementById('error').textContent = [body.message, body.suggestion].filter(Boolean).join(' ');
    return;
  }
  form.hidden = true;
  const signedIn = await post('/api/auth/sign-in/email', { email: data.email, password: data.password });
  const status = document.getElementById('status');
  if (signedIn.ok) {
    // Read out first (the status region is announced), then open the studio.
    status.textContent = 'Your account is ready and you are signed in. Opening the studio…';
    setTimeout(() => location.assign('/'), 1200);
  } else {
    const link = Object.assign(document.createElement('a'), { href: '/', textContent: 'sign in to the studio' });
    status.replaceChildren('Your account is ready: ', link, '.');
  }
});
</script>
</body>
</html>
`;
