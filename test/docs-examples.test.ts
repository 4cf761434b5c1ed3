import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { eventually, freePort } from './support/harness.ts';
import { withSwaks } from './support/processes.ts';

// The examples a new user copies, run as written against a fresh `npm start`: the README's Quick start
// (its banner, the SDK snippet, the curl for the .eml) and docs/smtp.md's nodemailer and swaks. Only
// what a user would fill in changes: the key the start printed, an email's id, and free ports for 3000
// and 2587.

const ROOT = resolve('.');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SMTP_DOC = readFileSync(join(ROOT, 'docs/smtp.md'), 'utf8');

/** The first fenced block of `language` after `marker` in `markdown` (the marker outside any block). */
function codeBlock(markdown: string, marker: string, language: string): string {
  const at = markdown.indexOf(marker);
  assert.ok(at >= 0, `"${marker}" is not in the document`);
  const open = markdown.indexOf(`\`\`\`${language}\n`, at);
  assert.ok(open >= 0, `no ${language} block after "${marker}"`);
  const start = open + language.length + 4;
  return markdown.slice(start, markdown.indexOf('\n```', start) + 1);
}

/** Runs `code` as an ES module from the project's root (its node_modules hold resend and nodemailer). */
function runModule(code: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
}

function runShell(script: string, cwd: string, env: Record<string, string>) {
  return spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
}

describe("the docs' examples, run as written against a fresh start", () => {
  let dir: string;
  let port: number;
  let submissionPort: number;
  let mailroom: ReturnType<typeof spawn>;
  let stderr = '';
  let key: string;
  let resend: Resend;
  /** A docs' snippet with the default ports replaced by this start's. */
  const withPorts = (text: string) => text.replaceAll('localhost:3000', `localhost:${port}`).replaceAll('2587', String(submissionPort));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-docs-'));
    [port, submissionPort] = [await freePort(), await freePort()];
    // `npm start` as the Quick start runs it, and SUBMISSION_PORT as docs/smtp.md's examples need; the
    // database in a folder of its own rather than the checkout's ./data.
    const env = { ...process.env, PORT: String(port), SUBMISSION_PORT: String(submissionPort), DATABASE_URL: join(dir, 'mailroom.db'), MAILROOM_SECRET: '', MAILROOM_API_KEY: '', SMTP_URL: '', LOG_LEVEL: 'warn' };
    mailroom = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    mailroom.stderr!.on('data', (chunk) => (stderr += chunk));
    key = await eventually(() => /^ {2}(re_[A-Za-z0-9_-]{32,})$/m.exec(stderr)?.[1], 60_000);
    resend = new Resend(key, { baseUrl: `http://localhost:${port}` });
  });
  after(async () => {
    const exited = new Promise((resolve) => mailroom.once('exit', resolve));
    process.kill(-mailroom.pid!, 'SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints the Quick start's banner", () => {
    const shown = codeBlock(README, 'stdout carries only JSON log lines):', '').trim().split('\n');
    // SUBMISSION_PORT, which the Quick start does not set, adds its own lines.
    const printed = stderr.split('\n').filter((line) => !/^(SMTP submission|Warning: SMTP clients)/.test(line));
    const at = printed.findIndex((line) => line.startsWith('Mailroom is listening'));
    assert.deepEqual(
      printed.slice(at, at + shown.length).map((line) => line.replace(key, 're_3q4T...')),
      shown.map(withPorts),
    );
  });

  it("sends with the Quick start's SDK snippet, then fetches the .eml with its curl", async () => {
    const exports = codeBlock(README, 'Send with the official SDK', 'sh');
    const env = Object.fromEntries([...exports.matchAll(/^export (\w+)=(\S+)/gm)].map(([, name, value]) => [name!, withPorts(value!).replace('re_3q4T...', key)]));
    assert.deepEqual(Object.keys(env), ['RESEND_API_KEY', 'RESEND_BASE_URL']);
    const sent = runModule(codeBlock(README, 'Send with the official SDK', 'js'), env);
    assert.equal(sent.status, 0, sent.stderr);
    const id = /id: '([0-9a-f-]{36})'/.exec(sent.stdout)?.[1];
    assert.ok(id, sent.stdout);
    await eventually(async () => (await resend.emails.get(id)).data?.last_event === 'delivered');

    const curl = codeBlock(README, 'Then read it back', 'sh').replace(/^EMAIL_ID=\.\.\..*$/m, `EMAIL_ID=${id}`);
    const fetched = runShell(curl, dir, env);
    assert.equal(fetched.status, 0, fetched.stderr);
    const eml = readFileSync(join(dir, 'message.eml'), 'utf8');
    assert.match(eml, /^Subject: Hi\r$/m);
    assert.match(eml, /<p>It works<\/p>/);
  });

  it("sends with docs/smtp.md's nodemailer example", async () => {
    const sent = runModule(withPorts(codeBlock(SMTP_DOC, '**nodemailer**', 'js')), { MAILROOM_API_KEY: key });
    assert.equal(sent.status, 0, sent.stderr);
    const id = /^250 2\.0\.0 OK ([0-9a-f-]{36})$/m.exec(sent.stdout)?.[1];
    assert.ok(id, sent.stdout);
    const email = (await resend.emails.get(id)).data!;
    assert.deepEqual([email.subject, email.to, email.tags], ['Welcome', ['ada@example.org'], [{ name: 'category', value: 'welcome' }]]);
  });

  it("sends with docs/smtp.md's swaks example, its attachment and no warning", withSwaks, async () => {
    const run = runShell(withPorts(codeBlock(SMTP_DOC, '**swaks**', 'sh')), dir, { MAILROOM_API_KEY: key });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.doesNotMatch(run.stdout + run.stderr, /WARNING/i);
    const id = /<~ {1,2}250 2\.0\.0 OK ([0-9a-f-]{36})/.exec(run.stdout)?.[1];
    assert.ok(id, run.stdout);
    const attachments = await resend.get<{ data: { filename: string }[] }>(`/emails/${id}/attachments`);
    assert.deepEqual(attachments.data?.data.map((a) => a.filename), ['report.txt']);
  });
});
