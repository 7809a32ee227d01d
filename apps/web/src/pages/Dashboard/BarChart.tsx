import { Text } from '@mantine/core';
import { barGeometry, labelledIndexes } from './bars';

const WIDTH = 320;
const HEIGHT = 110;
const AXIS = 16;

/** Vertical bars with a label under some of them; each bar names its value in a tooltip. */
export function BarChart({
  data,
  label,
}: {
  data: readonly { label: string; value: number }[];
  /** Accessible name of the chart. */
  label: string;
}) {
  const bars = barGeometry(
    data.map((d) => d.value),
    WIDTH,
    HEIGHT,
  );
  const labelled = labelledIndexes(data.length, 4);
  if (data.length === 0) return <Text c="dimmed">—</Text>;
  return (
    <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + AXIS}`} width="100%" role="img" aria-label={label}>
      <line x1={0} x2={WIDTH} y1={HEIGHT} y2={HEIGHT} style={{ stroke: 'var(--mantine-color-gray-4)' }} />
      {bars.map((bar, index) => {
        const point = data[index];
        if (!point) return null;
        return (
          <g key={point.label}>
            <rect
              x={bar.x}
              y={bar.y}
              width={bar.width}
              height={Math.max(bar.height, point.value > 0 ? 1 : 0)}
              style={{ fill: 'var(--mantine-color-blue-6)' }}
              rx={2}
            >
              <title>{`${point.label}: ${point.value}`}</title>
            </rect>
            {labelled.has(index) ? (
              <text
                x={index === data.length - 1 ? WIDTH : bar.x + bar.width / 2}
                y={HEIGHT + AXIS - 3}
                textAnchor={index === data.length - 1 ? 'end' : 'middle'}
                fontSize={10}
                style={{ fill: 'var(--mantine-color-dimmed)' }}
              >
                {point.label}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}
