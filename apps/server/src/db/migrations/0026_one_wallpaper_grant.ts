/**
 * 0026: permissions that mean what the console shows.
 *
 * - Set Wallpaper has two routes, `setWallpaper` and `batch`, one screen and one command; the
 *   server only ever checked `setWallpaper` (a USER holding just `batch` saw the screen and was refused
 *   its upload). `batch` is no longer a permission: whoever held it holds `setWallpaper`, and the console
 *   opens both routes with that grant (screens.ts `grant`).
 * - `userManagement` (ADMIN only) and `deviceAction` (SUPERADMIN only) open nothing for a USER, and the
 *   server now refuses them to one: the ones USERs held are removed. They stay permissions (the console's
 *   permission list names them), of use to nobody but kept so that ids and integrations do not change.
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `INSERT INTO user_permissions (user_id, permission_id)
     SELECT up.user_id, sw.id
     FROM user_permissions up
     JOIN permissions b ON b.id = up.permission_id AND b.permission_name = 'batch'
     CROSS JOIN permissions sw
     WHERE sw.permission_name = 'setWallpaper'
   ON CONFLICT DO NOTHING`,
  `DELETE FROM permissions WHERE permission_name = 'batch'`,
  `DELETE FROM user_permissions up
     USING users u, permissions p
     WHERE u.id = up.user_id AND p.id = up.permission_id
       AND u.userlevel = 'USER' AND p.permission_name IN ('userManagement', 'deviceAction')`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
