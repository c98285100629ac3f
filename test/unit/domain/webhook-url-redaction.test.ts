// Webhook URLs as responses show them (domain/webhooks.ts): user info, the path after its first
// segment and query values masked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactedWebhookUrl } from '../../../src/domain/webhooks.js';

test('credentials, the path after its first segment and query values are masked', () => {
  assert.equal(
    redactedWebhookUrl('https://alice:s3cr%40t@hooks.example.com:8443/in/abc?token=xyz&v=2#frag'),
    'https://***:***@hooks.example.com:8443/in/***?token=***&v=***#***',
  );
  assert.equal(
    redactedWebhookUrl('https://hooks.slack.com/services/T0001/B0002/XXXXSECRETXXXX'),
    'https://hooks.slack.com/services/***',
  );
  assert.equal(
    redactedWebhookUrl('https://discord.com/api/webhooks/123456/tok-SECRET'),
    'https://discord.com/api/***',
  );
  assert.equal(redactedWebhookUrl('https://t0ken@hooks.example.com/'), 'https://***@hooks.example.com/');
  // A bare parameter may be the secret itself.
  assert.equal(redactedWebhookUrl('http://10.0.0.5/hook?s3cret&a=1'), 'http://10.0.0.5/hook?***&a=***');
});

test('a URL without secrets is shown as it is', () => {
  for (const url of ['https://hooks.example.com/in', 'http://127.0.0.1:8080/hook', 'https://h.example/in/'])
    assert.equal(redactedWebhookUrl(url), url);
});

test('no secret survives in the output', () => {
  const out = redactedWebhookUrl(
    'https://u-SECRET1:p-SECRET2@h.example/x/SECRET6/y?k=SECRET3&SECRET4#SECRET5',
  );
  assert.doesNotMatch(out, /SECRET/);
});
