/** The key just generated, shown this once (only its hash is stored) with a copy button. */
import type { GeneratedKey } from '../../api/keys';
import { OneTimeSecret } from '../../components/OneTimeSecret';
import { KEY_LABELS } from './labels';

export function NewKeyNotice({ created, onDismiss }: { created: GeneratedKey; onDismiss: () => void }) {
  return (
    <OneTimeSecret
      title={KEY_LABELS.newKey}
      message={created.message}
      secret={created.key}
      labels={{ copy: KEY_LABELS.copy, copied: KEY_LABELS.copied, dismiss: KEY_LABELS.dismiss }}
      onDismiss={onDismiss}
      testIds={{ notice: 'new-key-notice', secret: 'new-key' }}
    />
  );
}
