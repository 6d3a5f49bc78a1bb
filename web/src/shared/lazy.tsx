import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * A view whose code is a chunk of its own, fetched the first time it is shown: the pages most
 * visits never open (settings, admin, the library, the service's pages) stay out of the first
 * load, which is what a phone on a slow link waits for before it can write.
 */
export function lazyView<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  return function LazyView(props: P) {
    const [View, setView] = useState<ComponentType<P> | undefined>(() => loaded);
    const [failed, setFailed] = useState(false);
    useEffect(() => {
      if (View) return;
      (loading ??= load().then((v) => (loaded = v))).then(
        (v) => setView(() => v),
        () => ((loading = undefined), setFailed(true)),
      );
    }, []);
    if (failed) return <p role="alert" class="page-message">This page could not be loaded. Check the connection and reload.</p>;
    return View ? <View {...props} /> : <p class="page-message">Loading…</p>;
  };
}
