/** An error from the API, with its message, that the user can dismiss. */
export function ErrorBanner({ message, onDismiss, testid = 'action-error' }: { message: string | undefined; onDismiss?: () => void; testid?: string }) {
  if (!message) return null;
  return (
    <div class="banner banner-error" role="alert" data-testid={testid}>
      <span>{message}</span>
      {onDismiss && (
        <button type="button" class="link" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}
