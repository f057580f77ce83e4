/** Tally's version, as package.json states it (a test holds the two equal). */
export const TALLY_VERSION = '0.1.0';
