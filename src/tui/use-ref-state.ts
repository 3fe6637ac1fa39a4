import { useRef, useState } from 'react';

/**
 * State the key handler reads through a ref: Ink may call it before React has handed it the latest render's
 * values, so the setter updates the ref at once and the state for the next render.
 */
export function useRefState<T>(initial: T): [T, { readonly current: T }, (next: T) => void] {
  const [value, setValue] = useState(initial);
  const ref = useRef(value);
  const set = (next: T) => {
    ref.current = next;
    setValue(() => next);
  };
  return [value, ref, set];
}
