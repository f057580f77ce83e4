/**
 * Debian's Chromium driven by playwright-core for the page tests: launch (or the reason the tests
 * are skipped: only outside CI, only when /usr/bin/chromium is absent), waiting for the
 * verification panel's verdict, axe-core injected into the page, the phone-width check and
 * screenshots under the git-ignored test-output/.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const OUTPUT = join('test-output', 'pages');

/** The `skip` option of a browser test: false when it can run; under CI it always runs (and fails without Chromium). */
export function skipWithoutChromium(): string | false {
  if (existsSync(CHROMIUM) || process.env.CI) return false;
  return `Chromium is not installed at ${CHROMIUM} (apt-get install chromium): the browser tests are skipped`;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `the browser tests need Chromium at ${CHROMIUM} (Debian package chromium); it is missing`,
    );
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

export interface PanelVerdict {
  verdict: string;
  failedCheck: string | null;
  status: string;
  checks: string[];
}

/** Waits until the panel has a verdict and reads it. */
export async function panelVerdict(page: Page): Promise<PanelVerdict> {
  await page.waitForFunction(() => document.getElementById('verify')?.dataset.verdict !== 'pending', null, {
    timeout: 60_000,
  });
  return page.evaluate(() => {
    const panel = document.getElementById('verify')!;
    return {
      verdict: panel.dataset.verdict ?? '',
      failedCheck: panel.dataset.failedCheck ?? null,
      status: document.getElementById('verify-status')?.textContent ?? '',
      checks: Array.from(document.querySelectorAll('#verify-checks li'), (li) => li.textContent ?? ''),
    };
  });
}

const AXE = readFileSync(join('node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(
  page: Page,
): Promise<{ id: string; impact: string; targets: string[] }[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
}

/** How far the page is wider than its viewport (0: no horizontal scroll). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true });
}

/** The page's main text as rendered (what a reader sees). */
export function mainText(page: Page): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's rendered text, not the DOM property
  return page.locator('main').innerText();
}
