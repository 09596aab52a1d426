// TEMPORARY (lead): moved to api/token-format.ts; import from there.
export { newToken, tokenId, hashToken, type NewToken } from '../../api/token-format.js';
