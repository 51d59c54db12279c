import { useEffect, useState } from 'preact/hooks';
import { folio, messageOf } from '../api.ts';
import type { AlertSetting } from '../types.ts';
import { ErrorAlert } from '../error-alert.tsx';

const LABELS: Record<AlertSetting['alertType'], string> = {
  email_delivery_failure: 'Email delivery failures',
  monitoring_alarm: 'Monitoring alarms',
};

/** Admin alert settings: mute an alert type, choose its channels, reroute its email. */
export function AlertsPage() {
  const [settings, setSettings] = useState<AlertSetting[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    folio.admin.alertSettings.query().then(
      (result) => setSettings(result.settings),
      (caught: unknown) => setError(messageOf(caught)),
    );
  }, []);
  return (
    <>
      <h1>Alert settings</h1>
      <p>Each kind of admin alert goes by email and messenger unless you mute it or change its channels. Email goes to ALERT_EMAIL unless rerouted.</p>
      <ErrorAlert error={error} />
      {settings?.map((setting) => (
        <AlertForm
          key={setting.alertType}
          setting={setting}
          onSaved={(next) => setSettings((current) => current?.map((entry) => (entry.alertType === next.alertType ? next : entry)) ?? null)}
        />
      ))}
    </>
  );
}

function AlertForm(props: { setting: AlertSetting; onSaved: (setting: AlertSetting) => void }) {
  const { setting } = props;
  const [muted, setMuted] = useState(!setting.enabled);
  const [email, setEmail] = useState(setting.channels.includes('email'));
  const [messenger, setMessenger] = useState(setting.channels.includes('messenger'));
  const [emailTo, setEmailTo] = useState(setting.emailTo ?? '');
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const id = `alert-${setting.alertType}`;
  const label = LABELS[setting.alertType];

  const save = async (event: Event) => {
    event.preventDefault();
    setError('');
    setMessage('');
    const channels = [...(email ? (['email'] as const) : []), ...(messenger ? (['messenger'] as const) : [])];
    if (channels.length === 0) {
      setError('Keep at least one channel; to stop this alert, mute it.');
      return;
    }
    try {
      const saved = await folio.admin.updateAlertSetting.mutate({
        alertType: setting.alertType,
        enabled: !muted,
        channels,
        emailTo: emailTo.trim() || null,
      });
      props.onSaved(saved);
      setMessage(
        saved.enabled
          ? `${label} go by ${saved.channels.join(' and ')}${saved.channels.includes('email') ? ` to ${saved.emailTo ?? 'ALERT_EMAIL'}` : ''}.`
          : `${label} are muted.`,
      );
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{label}</h2>
      {/* the server checks the address, and its answer is shown as a sentence */}
      <form noValidate onSubmit={(event) => void save(event)}>
        <label>
          <input type="checkbox" checked={muted} onChange={(event) => setMuted(event.currentTarget.checked)} /> Mute {label.toLowerCase()}
        </label>
        <fieldset>
          <legend>Channels for {label.toLowerCase()}</legend>
          <label>
            <input type="checkbox" checked={email} onChange={(event) => setEmail(event.currentTarget.checked)} /> Email
          </label>
          <label>
            <input type="checkbox" checked={messenger} onChange={(event) => setMessenger(event.currentTarget.checked)} /> Messenger
          </label>
        </fieldset>
        <div class="field">
          <label for={`${id}-email-to`}>Send the email of {label.toLowerCase()} to (empty: ALERT_EMAIL)</label>
          <input id={`${id}-email-to`} type="email" maxLength={320} value={emailTo} onInput={(event) => setEmailTo(event.currentTarget.value)} />
        </div>
        <button class="primary" type="submit">
          Save {label.toLowerCase()}
        </button>
      </form>
      <p role="status">{message}</p>
      <ErrorAlert error={error} />
    </section>
  );
}
