/** Where an account sets up (or looks at) its two-factor authentication: outside the layout, which it may not enter yet. */
export const TWO_FACTOR_PATH = '/twoFactor';
