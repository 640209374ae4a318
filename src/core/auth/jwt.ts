import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, errors as joseErrors, type JWK, type CryptoKey } from 'jose';
import { AppError } from '../errors.js';
import type { Database } from '../db/database.js';
import type { SecretBox } from '../crypto.js';
import { randomHex } from '../crypto.js';
import { isUuid } from '../ids.js';

export const ISSUER = 'platform-api';
export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export interface AccessClaims { sub: string; org: string; sid: string; ver: number }

type Key = { kid: string; privateKey: CryptoKey; publicKey: CryptoKey; publicJwk: JWK };

/**
 * EdDSA (Ed25519) signer for access tokens and short-lived purpose tokens (MFA challenge).
 * The key pair is created on first start and kept, sealed, in the database so every node shares it.
 */
export class TokenSigner {
  private constructor(private readonly keys: Map<string, Key>, private readonly current: Key) {}

  static async load(db: Database, box: SecretBox): Promise<TokenSigner> {
    let rows = await db.sys.query<{ kid: string; private_jwk_sealed: string; public_jwk: JWK }>(
      `SELECT kid, private_jwk_sealed, public_jwk FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid`);
    if (rows.length === 0) {
      const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
      const kid = randomHex(8);
      const priv = await exportJWK(privateKey);
      const pub = await exportJWK(publicKey);
      await db.sys.query(
        `INSERT INTO signing_keys (kid, private_jwk_sealed, public_jwk)
         SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE retired_at IS NULL)`,
        [kid, box.seal(JSON.stringify(priv)), { ...pub, kid, alg: 'EdDSA', use: 'sig' }]);
      rows = await db.sys.query(`SELECT kid, private_jwk_sealed, public_jwk FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid`);
    }
    const keys = new Map<string, Key>();
    for (const r of rows) {
      let opened: string;
      try { opened = box.open(r.private_jwk_sealed); } catch {
        // Sealed with another encryption key (another DATA_DIR's key file, or ENCRYPTION_KEY), or the sealed text is damaged.
        throw new Error('The token signing key stored in the database cannot be opened with this encryption key: use the '
          + 'ENCRYPTION_KEY, or the DATA_DIR (its encryption.key file), that this database was first used with (or the stored key is damaged)');
      }
      const privateKey = (await importJWK(JSON.parse(opened), 'EdDSA')) as CryptoKey;
      const publicKey = (await importJWK(r.public_jwk, 'EdDSA')) as CryptoKey;
      keys.set(r.kid, { kid: r.kid, privateKey, publicKey, publicJwk: r.public_jwk });
    }
    return new TokenSigner(keys, keys.get(rows[0].kid)!);
  }

  jwks(): { keys: JWK[] } { return { keys: [...this.keys.values()].map((k) => k.publicJwk) }; }

  async signAccess(c: AccessClaims): Promise<string> {
    return this.sign({ org: c.org, sid: c.sid, ver: c.ver, typ: 'access' }, c.sub, ACCESS_TOKEN_TTL_SECONDS);
  }

  async sign(claims: Record<string, unknown>, subject: string, ttlSeconds: number): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: this.current.kid, typ: 'JWT' })
      .setSubject(subject).setIssuer(ISSUER).setIssuedAt().setJti(randomHex(8))
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.current.privateKey);
  }

  /** Verifies signature (EdDSA only; `alg:none` and other algorithms are refused), issuer, expiry and purpose. */
  async verify(token: string, typ: string): Promise<Record<string, unknown> & { sub: string; exp: number }> {
    // One string per token: base64url decoding ignores a last character's unused bits, so without this check four or
    // sixteen spellings of one signature would verify (and be four different keys of the credential cache).
    if (!token.split('.').every((part) => Buffer.from(part, 'base64url').toString('base64url') === part)) {
      throw new AppError('AUTH_TOKEN_INVALID', 'Token is malformed or its signature is invalid');
    }
    try {
      const { payload } = await jwtVerify(token, (header) => {
        const key = header.kid ? this.keys.get(header.kid) : undefined;
        if (!key) throw new AppError('AUTH_TOKEN_INVALID', 'Token was not signed by this platform');
        return key.publicKey;
      }, { algorithms: ['EdDSA'], issuer: ISSUER });
      if (payload.typ !== typ || typeof payload.sub !== 'string') throw new AppError('AUTH_TOKEN_INVALID', 'Token is not valid for this use');
      // The ids this platform puts in its tokens; checked so that a token signed with other claims (a leaked or
      // misused key) is refused here, not handed to a query that cannot read it (a 500).
      const uuid = (v: unknown) => typeof v === 'string' && isUuid(v);
      if (!uuid(payload.sub) || (typ === 'access' && !uuid(payload.sid)) || (payload.org !== undefined && !uuid(payload.org))) {
        throw new AppError('AUTH_TOKEN_INVALID', 'Token is malformed: its claims are not this platform\'s');
      }
      return payload as Record<string, unknown> & { sub: string; exp: number };
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new AppError('AUTH_TOKEN_EXPIRED', 'Token has expired; refresh it or sign in again');
      throw new AppError('AUTH_TOKEN_INVALID', 'Token is malformed or its signature is invalid');
    }
  }
}
