import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

/**
 * A list that renders only the rows in view (plus a margin), inside a spacer as tall as all rows:
 * a million rows cost as much as forty. `onRange` tells the owner which rows to have loaded.
 */
export function VirtualList({ count, rowHeight, height, row, onRange }: { count: number; rowHeight: number; height: number; row: (index: number) => ComponentChildren; onRange?: (first: number, last: number) => void }) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const margin = 10;
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - margin);
  const last = Math.min(count, Math.ceil((scrollTop + height) / rowHeight) + margin);
  useEffect(() => onRange?.(first, last), [first, last, onRange]);
  // A new list (other filters) starts at its top.
  useEffect(() => {
    if (scroller.current && scrollTop > count * rowHeight) {
      scroller.current.scrollTop = 0;
      setScrollTop(0);
    }
  }, [count]);
  const rows = [];
  for (let index = first; index < last; index++) {
    rows.push(
      <div key={index} class="vrow" style={{ top: `${index * rowHeight}px`, height: `${rowHeight}px` }}>
        {row(index)}
      </div>,
    );
  }
  return (
    <div ref={scroller} class="vlist" style={{ height: `${height}px` }} onScroll={(event) => setScrollTop((event.currentTarget as HTMLDivElement).scrollTop)}>
      <div class="vspace" style={{ height: `${count * rowHeight}px` }}>
        {rows}
      </div>
    </div>
  );
}
